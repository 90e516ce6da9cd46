#!/usr/bin/python3
"""Independent expectations for crates/apparmor's signal reference test.

Reads the shipped profiles with python3-apparmor (what aa-logprof uses:
apparmor.aa parses profiles, includes and variables; SignalRule carries
a rule's access, signal set, peer AARE and audit/deny), plus the
synthetic profiles of SYNTHETIC below (written to OUT_DIR/synthetic and
read the same way), generates queries from every profile's signal rules
and writes for each what the profile text grants:

    FILE<TAB>PROFILE<TAB>MODE<TAB>AUDIT_ALL<TAB>SIGNAL<TAB>PEER<TAB>ACCESS<TAB>GRANT<TAB>AUDIT<TAB>QUIET<TAB>HOW

FILE is the profile file (to compile with apparmor_parser), PROFILE the
kernel's hierarchical name (`parent//child` for children and hats), MODE
enforce, complain, kill or unconfined from the profile's flags, AUDIT_ALL
1 for `flags=(audit)`. SIGNAL is a Linux x86-64 signal number (0 is
`exists`, 32 + N is `rtmin+N`), PEER a label name, ACCESS send or
receive. GRANT is 1 when some allow rule covers the query and no deny
rule does, AUDIT 1 when an `audit` allow rule covers it (only meaningful
when granted), QUIET 1 when a deny rule without `audit` covers it (only
meaningful when not granted; `audit deny` means "do not quiet"). Coverage
is SignalRule.is_covered of the profile's rules over a query rule built
from the concrete access, signal and peer (the peer matched with
AARE.match, as aa-logprof matches a log event). The Rust test derives
the decision and the audit record from these and the mode; nothing here
comes from Rampart.

What python3-apparmor does not model is added here, each from
apparmor_parser's or the kernel's documented behaviour (never from
Rampart):
- access aliases: apparmor.d(5) lists r, w, rw, read and write beside
  send and receive; the parser compiles `r`/`read` as `receive`,
  `w`/`write` as `send` and `rw`/`wr` as both (its `-D rule-exprs`
  output: 0x4, 0x2, 0x6). SignalRule keeps them as distinct words, so
  rules are rebuilt with the canonical ones;
- `rtmin+N` is a number to the parser (`rtmin+05` is `rtmin+5`);
- signal numbers: the parser's names hup..sys are AppArmor's 1..31,
  which are x86-64's own numbers; `emt` has no x86-64 signal; `exists`
  is signal 0 and `rtmin+N` the kernel's SIGRTMIN (32) + N (kernel
  sig_names.h map_signal_num);
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
  label_match return a consistent value" (a4c9efa4dbad6); before it, a
  whole-name walk that reached the DFA's dead state was refused without
  trying the components. HOW says which case a query took: whole,
  components or invisible.

usage: pysignal.py OUT_DIR SEED [ROUNDS]
ROUNDS (default 2) scales the peers drawn per profile: instances of
each peer glob, near misses, other profiles, random names and stacks.
writes OUT_DIR/synthetic (profiles) and OUT_DIR/signal.tsv
"""

import os
import re
import sys

import apparmor.aa as aa
from apparmor.rule.signal import SignalRule, signal_keywords

from peers import alternatives, each_profile, expand_vars, instantiate, label_match, near_misses, profile_mode, stack, start

# The canonical access words (r/read = receive, w/write = send,
# rw/wr = both: see the module doc).
ACCESS_ALIASES = {
    "receive": ("receive",), "r": ("receive",), "read": ("receive",),
    "send": ("send",), "w": ("send",), "write": ("send",),
    "rw": ("receive", "send"), "wr": ("receive", "send"),
}

# Linux x86-64 numbers of the parser's signal names: hup..sys are
# AppArmor's (and x86-64's) 1..31 in signal_keywords' order.
NAME_TO_LINUX = {name: i + 1 for i, name in enumerate(signal_keywords[:31])}
NAME_TO_LINUX["exists"] = 0
assert signal_keywords[30] == "sys" and signal_keywords[8] == "kill" and signal_keywords[14] == "term"


def signal_name(sig):
    """The rule keyword for a Linux signal number."""
    if sig == 0:
        return "exists"
    if 1 <= sig <= 31:
        return signal_keywords[sig - 1]
    return "rtmin+%d" % (sig - 32)


def canonical_signal(name):
    """A rule's signal word, or None for one without an x86-64 signal."""
    name = name.strip('"')
    m = re.match(r"^rtmin\+0*([0-9]+)$", name)
    if m:
        return "rtmin+%d" % int(m.group(1))
    return name if name in NAME_TO_LINUX else None


# Synthetic profiles for what the shipped ones lack: deny and audit deny
# rules, audit allow rules, complain, kill, audit and unconfined modes,
# access aliases, rtmin sets, variables, stacks whose whole name is
# denied, profiles without signal rules, @{profile_name} in a glob-named
# profile, in a child and in a hat.
SYNTHETIC = r"""
#include <tunables/global>

@{SYN_PEERS}=syn-va syn-vb

profile syn_enforce {
  signal (send) set=(term, kill) peer=syn-*,
  signal (receive) set=(hup usr1) peer=/usr/bin/syn{a,b},
  signal r set=(rtmin+0 rtmin+05 rtmin+32) peer=unconfined,
  signal w set=exists,
  signal rw set=(int) peer=@{SYN_PEERS},
  signal (read, write) set=(stop cont) peer=@{profile_name}//*,
  deny signal (send) set=kill peer=syn-deny*,
  deny signal (receive) peer=syn-deny*,
  audit deny signal (send) set=term peer=syn-auditdeny,
  audit signal (receive) set=(chld, "winch") peer=syn-**,
  signal peer=syn-x//&syn-y,
  signal (send) peer=syn-comp-a,
  signal (send) peer=syn-comp-b,
  deny signal (send) set=usr2 peer=syn-comp-a//&syn-comp-b,
  signal send set=quit peer=[a-c]?syn,
  signal send set=(emt, pwr) peer=syn-emt,

  profile child {
    signal peer=@{profile_name},
    signal send set=term peer=syn_enforce,
  }

  ^hat {
    signal receive peer=@{profile_name},
    audit signal send set=(rtmin+1 rtmin+2) peer=syn-*,
  }
}

profile syn_complain flags=(complain) {
  signal (send) set=(term, hup) peer=syn-*,
  deny signal (send) set=(kill, term) peer=syn-quiet*,
  audit deny signal (send) set=(kill) peer=syn-loud*,
  deny signal (receive) peer=syn-quiet*,
  audit signal receive set=hup,
  signal peer=syn-x//&syn-y,
  deny signal (receive) set=(usr1) peer=syn-x,
  deny signal (receive) set=(usr1) peer=syn-y,
}

profile syn_kill flags=(kill) {
  signal (send) set=(term) peer=syn-*,
  deny signal (send) set=(term) peer=syn-quiet*,
  audit signal (receive) set=(term) peer=syn-*,
}

profile syn_audit flags=(audit) {
  signal send set=term peer=syn-*,
  deny signal (send) set=kill peer=syn-q*,
}

profile syn_unconfined flags=(unconfined) {
  signal send set=term peer=syn-*,
}

profile syn_none {
  /etc/hostname r,
}

profile syn_none_complain flags=(complain) {
  capability chown,
}

profile /usr/bin/syn* {
  signal peer=@{profile_name},
  signal send peer=/usr/bin/syn*x,
}
"""


class Rule:
    """A profile's signal rule as the parser compiles it for this profile."""

    def __init__(self, rule, kname, variables):
        self.deny, self.audit = rule.deny, rule.audit
        if rule.all_access:
            access = SignalRule.ALL
        else:
            access = sorted({a for w in rule.access for a in ACCESS_ALIASES[w]})
        if rule.all_signals:
            signals = SignalRule.ALL
        else:
            signals = sorted({s for s in map(canonical_signal, rule.signal) if s})
        self.exact = None
        self.glob = None
        peer = SignalRule.ALL
        if not rule.all_peers:
            raw = rule.peer.regex
            if raw.startswith('"') and raw.endswith('"'):
                raw = raw[1:-1]
            self.glob, self.exact = expand_vars(raw, kname, variables)
            if self.glob:
                peer = self.glob
        # a set of only `emt` names no x86-64 signal: the rule never matches
        self.never = signals != SignalRule.ALL and not signals
        self.rule = None if self.never else SignalRule(access, signals, peer, audit=self.audit, deny=self.deny)

    def covers(self, query, peer):
        if self.never:
            return False
        if self.exact is not None and peer != self.exact:
            return False
        return self.rule.is_covered(query, check_allow_deny=False)


def sets(rules, access, sig, peer, cache):
    """(allowed, denied, audit, quiet) for one label name."""
    key = (access, sig, peer)
    if key not in cache:
        q = SignalRule([access], [signal_name(sig)], peer, log_event=True)
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


def expect(rules, access, sig, peer, cache):
    """(GRANT, AUDIT, QUIET, HOW) for a peer label (see the module doc)."""
    return label_match(lambda name: sets(rules, access, sig, name, cache), peer)


def main():
    out_dir, rng, rounds, synthetic = start(SYNTHETIC)
    all_names = sorted({t for store in (aa.aa, aa.extras) for t in store})
    n = profiles = 0
    with open(os.path.join(out_dir, "signal.tsv"), "w") as out:
        for store, top, name, prof in each_profile():
            filename = prof["filename"]
            incs = aa.include_list_recursive(prof)
            if filename in aa.active_profiles.files:
                variables = aa.active_profiles.get_all_merged_variables(filename, aa.include_list_recursive(aa.active_profiles.files[filename]))
            else:
                variables = {}
            kname = top if name == top else "%s//%s" % (top, name)
            raw = list(prof["signal"].rules)
            for inc in incs:
                raw.extend(aa.include[inc][inc]["signal"].rules)
            rules = [Rule(r, kname, variables) for r in raw]
            mode, audit_all = profile_mode(prof)

            # signals: the rules' sets, `exists`, common ones,
            # real-time ones and a few random
            sigs = {0, 1, 9, 15, 17, 19, 32, 33, 34, 40, 64}
            for r in rules:
                if r.rule and not r.rule.all_signals:
                    sigs |= {NAME_TO_LINUX[s] if s in NAME_TO_LINUX else 32 + int(s[6:]) for s in r.rule.signal}
            sigs |= set(rng.sample(range(65), 3))

            # peers: the rules' peers instantiated, near misses,
            # unconfined, the profile's own name and its family,
            # other profiles, random names, stacks
            seeds = []
            for r in rules:
                if r.exact is not None:
                    seeds.append(r.exact)
                elif r.glob:
                    for alt in alternatives(r.glob):
                        for _ in range(3 * rounds if filename == synthetic else rounds):
                            seeds.append(instantiate(alt, rng))
            seeds = list(dict.fromkeys(seeds))
            peers = ["unconfined", kname, top, kname + "//x", ":ns:" + kname, stack([kname, "unconfined"])]
            peers += ["%s//%s" % (top, c) for c in store[top] if c != top]
            for s in seeds:
                peers.append(s)
                peers.extend(rng.sample(near_misses(s, rng), min(rounds, 6)))
                if "//&" in s:
                    comps = s.split("//&")
                    peers.append(stack(comps))
                    peers.append(stack(comps + [rng.choice(seeds)]))
                    peers.append(stack([comps[0], ":ns:x"]))
            peers += rng.sample(all_names, 2 * rounds)
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
                for sig in sorted(sigs):
                    for access in ("send", "receive"):
                        grant, audit, quiet, how = expect(rules, access, sig, peer, cache)
                        out.write("\t".join([filename, kname, mode, audit_all, str(sig), peer, access,
                                             str(int(grant)), str(int(audit)), str(int(quiet)), how]) + "\n")
                        n += 1
    print("%d profiles, %d queries" % (profiles, n), file=sys.stderr)


if __name__ == "__main__":
    main()
