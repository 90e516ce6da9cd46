#!/usr/bin/python3
"""Independent expectations for crates/apparmor's ptrace reference test.

Reads the shipped profiles with python3-apparmor (what aa-logprof uses:
apparmor.aa parses profiles, includes and variables; PtraceRule carries
a rule's access, peer AARE and audit/deny), plus the synthetic profiles
of SYNTHETIC below (written to OUT_DIR/synthetic and read the same
way), generates queries from every profile's ptrace rules and writes for
each what the profile text grants:

    FILE<TAB>PROFILE<TAB>MODE<TAB>AUDIT_ALL<TAB>ROLE<TAB>REQUEST<TAB>PEER<TAB>GRANT<TAB>AUDIT<TAB>QUIET<TAB>HOW

FILE is the profile file (to compile with apparmor_parser), PROFILE the
kernel's hierarchical name (`parent//child` for children and hats), MODE
enforce, complain, kill or unconfined from the profile's flags, AUDIT_ALL
1 for `flags=(audit)`. ROLE is `tracer` (may the profile trace or read a
process under the label PEER: the kernel's profile_tracer_perm) or
`tracee` (may the profile be traced or read by a process under PEER:
profile_tracee_perm), REQUEST `trace` (PTRACE_MODE_ATTACH) or `read`
(PTRACE_MODE_READ). The rule permission a query needs is `trace` or
`read` for a tracer, `tracedby` or `readby` for a tracee. GRANT is 1
when some allow rule covers the query and no deny rule does, AUDIT 1
when an `audit` allow rule covers it (only meaningful when granted),
QUIET 1 when a deny rule without `audit` covers it (only meaningful when
not granted; `audit deny` means "do not quiet"). Coverage is
PtraceRule.is_covered of the profile's rules over a query rule built
from the one permission and the concrete peer (matched with AARE.match,
as aa-logprof matches a log event). The Rust test derives the decision
and the audit record from these and the mode; nothing here comes from
Rampart.

What python3-apparmor does not model is added here, each from
apparmor_parser's or the kernel's documented behaviour (never from
Rampart):
- access aliases: apparmor.d(5) lists r, w, rw, read, readby, trace and
  tracedby (PtraceRule also takes wr and write). parser_yacc.y
  (`ptrace_perm`) maps `trace` and `write` to AA_MAY_TRACE, `read` to
  AA_MAY_READ, `readby`/`tracedby` to their own bits, and single
  letters go through parse_X_perms (`r` = read, `w` = write), so `r` is
  read, `w`/`write` trace and `rw`/`wr` both; apparmor_parser 3.0.8's
  `-D rule-exprs` shows 0x4 for r/read, 0x2 for w/write/trace, 0x6 for
  rw/wr/(read, trace), 0x10 readby, 0x8 tracedby and 0x1e for a rule
  without access. `trace` does not imply `read` (nor `tracedby`
  `readby`): neither the grammar nor ptrace_rule's constructor adds a
  bit, and the kernel (lsm.c apparmor_ptrace_access_check) asks for
  exactly one of AA_PTRACE_READ or AA_PTRACE_TRACE. PtraceRule keeps the
  aliases as distinct words, so rules are rebuilt with the canonical
  ones;
- `@{profile_name}` in a peer is, for apparmor_parser 3.0 (see its
  `-D rule-exprs` output), the profile's full hierarchical name
  (`parent//hat`) with the glob characters {}[]*? escaped, so it
  matches that name literally; other variables are expanded as
  parser_variable.c does (a multi-value variable becomes {v1,v2});
- a peer that is a stack `A//&B` (the kernel prints a stacked label
  so, components sorted): label.c aa_label_match first matches the
  whole name (label_compound_match); only if that does not grant, each
  component on its own (label_components_match), granting when every
  component is granted, audited when one is, quieted when every one is;
  a component in another namespace (`:ns:name`) is not visible to the
  profile and skipped, and a label with no visible component is
  granted (`allperms`). This is label.c since "apparmor: make
  label_match return a consistent value" (a4c9efa4dbad6). HOW says
  which case a query took: whole, components or invisible;
- ipc.c profile_tracee_perm returns 0 (allowed, nothing audited, before
  any rule or the profile's audit flag is looked at) when the tracer's
  label is unconfined (`unconfined(tracer)`: the label's
  FLAG_UNCONFINED, which label.c sets when every profile in it is
  unconfined; every namespace's `unconfined` profile is, policy_ns.c
  alloc_unconfined). A tracer named `unconfined` or `:ns:unconfined`
  (or a stack of only those) is such a label: HOW is `unconfined`. A
  profile in `flags=(unconfined)` mode makes its label unconfined too,
  but a label name cannot say so: those names are not used as tracers.
  The tracer's side (profile_tracer_perm) has no such exception: an
  unconfined tracee is matched by name like any other.

usage: pyptrace.py OUT_DIR SEED [ROUNDS]
ROUNDS (default 2) scales the peers drawn per profile: instances of
each peer glob, near misses, other profiles, random names and stacks.
writes OUT_DIR/synthetic (profiles) and OUT_DIR/ptrace.tsv
"""

import os
import re
import sys

import apparmor.aa as aa
from apparmor.rule.ptrace import PtraceRule

from peers import alternatives, each_profile, expand_vars, instantiate, label_match, near_misses, profile_mode, stack, start

# The canonical permissions of each access word (see the module doc).
ACCESS_ALIASES = {
    "r": ("read",), "read": ("read",),
    "w": ("trace",), "write": ("trace",), "trace": ("trace",),
    "rw": ("read", "trace"), "wr": ("read", "trace"),
    "readby": ("readby",), "tracedby": ("tracedby",),
}

# The rule permission a (role, request) query needs.
PERMISSION = {
    ("tracer", "trace"): "trace", ("tracer", "read"): "read",
    ("tracee", "trace"): "tracedby", ("tracee", "read"): "readby",
}

# Synthetic profiles for what the shipped ones lack: deny and audit deny
# rules, audit allow rules, complain, kill, audit and unconfined modes,
# access aliases, variables, stacks whose whole name is denied, rules
# about the unconfined tracer, profiles without ptrace rules,
# @{profile_name} in a glob-named profile, in a child and in a hat.
SYNTHETIC = r"""
#include <tunables/global>

@{SYN_PEERS}=syn-va syn-vb

profile syn_enforce {
  ptrace trace peer=syn-*,
  ptrace (read) peer=/usr/bin/syn{a,b},
  ptrace r peer=syn-r,
  ptrace w peer=syn-w,
  ptrace rw peer=syn-rw,
  ptrace wr peer=syn-wr,
  ptrace write peer=syn-write,
  ptrace (read, trace) peer=unconfined,
  ptrace readby,
  deny ptrace (readby, tracedby) peer=unconfined,
  ptrace tracedby peer=syn-tracer*,
  ptrace (readby tracedby) peer=@{SYN_PEERS},
  ptrace read peer=@{profile_name}//*,
  deny ptrace trace peer=syn-deny*,
  deny ptrace (tracedby) peer=syn-deny*,
  audit deny ptrace trace peer=syn-auditdeny,
  audit ptrace (read, readby) peer=syn-**,
  ptrace peer=syn-x//&syn-y,
  ptrace (trace, tracedby) peer=syn-comp-a,
  ptrace (trace, tracedby) peer=syn-comp-b,
  deny ptrace (trace) peer=syn-comp-a//&syn-comp-b,
  ptrace trace peer=[a-c]?syn,
  ptrace (trace) peer=**//sanitized_helper,
  ptrace read peer="syn-quoted",

  profile child {
    ptrace peer=@{profile_name},
    ptrace trace peer=syn_enforce,
  }

  ^hat {
    ptrace (tracedby) peer=@{profile_name},
    audit ptrace (trace read) peer=syn-*,
  }
}

profile syn_complain flags=(complain) {
  ptrace (trace) peer=syn-*,
  deny ptrace (trace, read) peer=syn-quiet*,
  audit deny ptrace (trace) peer=syn-loud*,
  deny ptrace (readby, tracedby) peer=syn-quiet*,
  audit ptrace readby peer=syn-*,
  ptrace peer=syn-x//&syn-y,
  deny ptrace (tracedby) peer=syn-x,
  deny ptrace (tracedby) peer=syn-y,
}

profile syn_kill flags=(kill) {
  ptrace (trace) peer=syn-*,
  deny ptrace (trace) peer=syn-quiet*,
  audit ptrace (tracedby) peer=syn-*,
  ptrace (readby) peer=unconfined,
}

profile syn_audit flags=(audit) {
  ptrace trace peer=syn-*,
  deny ptrace (read, readby) peer=syn-q*,
  ptrace readby,
}

profile syn_unconfined flags=(unconfined) {
  ptrace trace peer=syn-*,
}

profile syn_denyall {
  deny ptrace,
  ptrace (read, readby),
}

profile syn_auditdenyall flags=(complain) {
  audit deny ptrace (trace, tracedby),
  ptrace,
}

profile syn_none {
  /etc/hostname r,
}

profile syn_none_complain flags=(complain) {
  capability chown,
}

profile syn_none_audit flags=(audit) {
  capability chown,
}

profile /usr/bin/syn* {
  ptrace peer=@{profile_name},
  ptrace trace peer=/usr/bin/syn*x,
}
"""


class Rule:
    """A profile's ptrace rule as the parser compiles it for this profile."""

    def __init__(self, rule, kname, variables):
        self.deny, self.audit = rule.deny, rule.audit
        if rule.all_access:
            access = PtraceRule.ALL
        else:
            access = sorted({a for w in rule.access for a in ACCESS_ALIASES[w]})
        self.exact = None
        self.glob = None
        peer = PtraceRule.ALL
        if not rule.all_peers:
            raw = rule.peer.regex
            if raw.startswith('"') and raw.endswith('"'):
                raw = raw[1:-1]
            self.glob, self.exact = expand_vars(raw, kname, variables)
            if self.glob:
                peer = self.glob
        self.rule = PtraceRule(access, peer, audit=self.audit, deny=self.deny)

    def covers(self, query, peer):
        if self.exact is not None and peer != self.exact:
            return False
        return self.rule.is_covered(query, check_allow_deny=False)


def sets(rules, perm, peer, cache):
    """(allowed, denied, audit, quiet) for one label name."""
    key = (perm, peer)
    if key not in cache:
        q = PtraceRule([perm], peer, log_event=True)
        a = d = au = qu = False
        for r in rules:
            if r.covers(q, peer):
                if r.deny:
                    d = True
                    qu = qu or not r.audit
                else:
                    a = True
                    au = au or r.audit
        cache[key] = (a, d, au, qu)
    return cache[key]


def unconfined_label(peer):
    """Whether every component is a namespace's `unconfined` profile."""
    return all(re.sub(r"^:[^:]+:(//)?", "", c) == "unconfined" for c in peer.split("//&"))


def expect(rules, role, perm, peer, cache):
    """(GRANT, AUDIT, QUIET, HOW) for a peer label (see the module doc)."""
    if role == "tracee" and unconfined_label(peer):
        return True, False, False, "unconfined"
    return label_match(lambda name: sets(rules, perm, name, cache), peer)


def main():
    out_dir, rng, rounds, synthetic = start(SYNTHETIC)
    all_names = sorted({t for store in (aa.aa, aa.extras) for t in store})
    # labels made unconfined by their mode (not usable as tracers: see
    # the module doc)
    unconfined_mode = {
        (top if name == top else "%s//%s" % (top, name))
        for store in (aa.aa, aa.extras) for top in store for name in store[top]
        if store[top][name]["filename"] and profile_mode(store[top][name])[0] == "unconfined"
    }
    n = profiles = 0
    with open(os.path.join(out_dir, "ptrace.tsv"), "w") as out:
        for store, top, name, prof in each_profile():
            filename = prof["filename"]
            incs = aa.include_list_recursive(prof)
            if filename in aa.active_profiles.files:
                variables = aa.active_profiles.get_all_merged_variables(filename, aa.include_list_recursive(aa.active_profiles.files[filename]))
            else:
                variables = {}
            kname = top if name == top else "%s//%s" % (top, name)
            raw = list(prof["ptrace"].rules)
            for inc in incs:
                raw.extend(aa.include[inc][inc]["ptrace"].rules)
            rules = [Rule(r, kname, variables) for r in raw]
            mode, audit_all = profile_mode(prof)

            # peers: the rules' peers instantiated, near misses,
            # unconfined (here, in another namespace, both), the
            # profile's own name and its family, other profiles,
            # random names, stacks
            seeds = []
            for r in rules:
                if r.exact is not None:
                    seeds.append(r.exact)
                elif r.glob:
                    for alt in alternatives(r.glob):
                        for _ in range(3 * rounds if filename == synthetic else rounds):
                            seeds.append(instantiate(alt, rng))
            seeds = list(dict.fromkeys(seeds))
            peers = ["unconfined", ":ns:unconfined", stack(["unconfined", ":ns:unconfined"]), kname, top,
                     kname + "//x", ":ns:" + kname, stack([kname, "unconfined"])]
            peers += ["%s//%s" % (top, c) for c in store[top] if c != top]
            for s in seeds:
                peers.append(s)
                peers.extend(rng.sample(near_misses(s, rng), min(rounds, 6)))
                if "//&" in s:
                    comps = s.split("//&")
                    peers.append(stack(comps))
                    peers.append(stack(comps + [rng.choice(seeds)]))
                    peers.append(stack([comps[0], ":ns:x"]))
            # ptrace between shipped profiles: a good share of
            # the others
            peers += rng.sample(all_names, min(len(all_names), 12 * rounds))
            peers += ["".join(rng.choice("abcxyz-_/.") for _ in range(rng.randrange(1, 12))) for _ in range(rounds)]
            # stacks of two names the rules cover, and of any two
            pool = list(dict.fromkeys(peers))
            for _ in range(rounds + 1):
                peers.append(stack(rng.sample(seeds, 2) if len(seeds) > 1 else seeds + [kname]))
                peers.append(stack(rng.sample(pool, 2)))
            # (a label's name has no empty component, and the TSV
            # no blanks)
            ok = lambda p: all(p.split("//&")) and not re.search(r"[\s\x00\"]", p)
            peers = [p for p in dict.fromkeys(peers) if ok(p)]

            cache = {}
            profiles += 1
            for peer in peers:
                comps = peer.split("//&")
                for role in ("tracer", "tracee"):
                    if role == "tracee" and any(c in unconfined_mode for c in comps) and \
                            all(c in unconfined_mode or unconfined_label(c) for c in comps):
                        continue
                    for request in ("trace", "read"):
                        grant, audit, quiet, how = expect(rules, role, PERMISSION[(role, request)], peer, cache)
                        out.write("\t".join([filename, kname, mode, audit_all, role, request, peer,
                                             str(int(grant)), str(int(audit)), str(int(quiet)), how]) + "\n")
                        n += 1
    print("%d profiles, %d queries" % (profiles, n), file=sys.stderr)


if __name__ == "__main__":
    main()
