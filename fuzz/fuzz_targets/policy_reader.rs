//! Feeds arbitrary bytes to the policy reader. Loading must never panic,
//! hang or allocate more than the input justifies; a policy that loads
//! must also survive the first things every caller does with it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rampart_policy::{Booleans, ClassId, CreateKind, Policy};

fuzz_target!(|data: &[u8]| {
    let Ok(p) = Policy::from_bytes(data) else { return };
    let bools = Booleans::defaults(&p);
    let all_on = Booleans::all(&p, true);

    // A context from the first user, role and type names (and the first
    // sensitivity when MLS), whether or not the policy accepts it.
    let user = p.users.first().map_or("u", |u| u.name.as_str());
    let role = p.roles.get(1).or(p.roles.first()).map_or("r", |r| r.name.as_str());
    let ty = p.types.iter().find(|t| !t.attribute).map_or("t", |t| t.name.as_str());
    let mut text = format!("{user}:{role}:{ty}");
    if p.mls {
        let s = p.sens.first().map_or("s0", |s| s.name.as_str());
        let c = p.cats.first().map_or("c0", |c| c.name.as_str());
        let c_last = p.cats.last().map_or("c0", |c| c.name.as_str());
        text.push_str(&format!(":{s}-{s}:{c}.{c_last}"));
    }
    let parsed = p.parse_context(&text);
    let object = p.parse_context(&format!("{user}:object_r:{ty}{}", if p.mls { ":s0" } else { "" }));
    let _ = p.parse_context("a:b");

    // Contexts the policy itself declares are valid by construction.
    let mut contexts: Vec<_> = p.ocontexts.initial_sids.iter().map(|(_, c)| c.clone()).take(4).collect();
    contexts.extend(parsed.ok());
    contexts.extend(object.ok());
    let name = p.filename_trans.first().map(|f| f.name.as_str());
    for s in &contexts {
        let _ = p.context_to_string(s);
        for t in &contexts {
            for class in [ClassId(1), ClassId(2), ClassId(p.classes.len() as u32), ClassId(0)] {
                let d = p.compute_av(&bools, s, t, class);
                let _ = p.compute_av(&all_on, s, t, class);
                let _ = p.av_to_names(class, d.allowed);
                for kind in [CreateKind::Transition, CreateKind::Member, CreateKind::Change] {
                    if let Ok(c) = p.compute_create(&bools, s, t, class, kind, name) {
                        let _ = p.context_to_string(&c);
                    }
                }
            }
        }
    }
});
