fn main() {
    let path = std::path::PathBuf::from("/etc/selinux/default/policy/policy.33");
    let bytes = std::fs::read(&path).unwrap();
    let t = std::time::Instant::now();
    let p = rampart_policy::Policy::from_bytes(&bytes);
    println!("{:?}", t.elapsed());
    match p {
        Ok(p) => {
            println!("classes {} types {} roles {} users {} bools {} avtab {} conds {} ft {}", p.classes.len(), p.types.len(), p.roles.len(), p.users.len(), p.bools.len(), p.avtab.len(), p.conds.len(), p.filename_trans.len());
            let b = rampart_policy::Booleans::defaults(&p);
            let s = p.parse_context("system_u:system_r:sshd_t:s0-s0:c0.c1023").unwrap();
            let t = p.parse_context("system_u:object_r:etc_t:s0").unwrap();
            let c = p.class_by_name("file").unwrap();
            let d = p.compute_av(&b, &s, &t, c);
            println!("{:08x} {:08x} {:08x} {:?}", d.allowed, d.auditallow, d.auditdeny, p.av_to_names(c, d.allowed));
            println!("{}", p.context_to_string(&s));
        }
        Err(e) => println!("{e}"),
    }
}
