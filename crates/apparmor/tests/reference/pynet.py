#!/usr/bin/python3
"""Independent expectations for crates/apparmor's socket-creation
reference test.

Reads the shipped profiles with python3-apparmor (what aa-logprof uses:
apparmor.aa parses profiles and includes; NetworkRule carries a rule's
domain (address family) or all domains, its type or protocol word or
all, and audit/deny), plus the synthetic profiles of SYNTHETIC below
(written to OUT_DIR/synthetic and read the same way), generates
socket() queries from every profile's network rules and writes for each
what the profile text grants:

    FILE<TAB>PROFILE<TAB>MODE<TAB>AUDIT_ALL<TAB>FAMILY<TAB>TYPE<TAB>PROTOCOL<TAB>GRANT<TAB>AUDIT<TAB>QUIET<TAB>HOW

FILE is the profile file (to compile with apparmor_parser), PROFILE the
kernel's hierarchical name (`parent//child` for children and hats), MODE
enforce, complain, kill or unconfined from the profile's flags, AUDIT_ALL
1 for `flags=(audit)`. FAMILY, TYPE and PROTOCOL are the numbers
socket(2) passes to the security hook (Linux x86-64: AF_* 0..45, SOCK_*
0..10; __sock_create refuses other families and types before the hook).
The request is `create`. GRANT is 1 when some allow rule covers the
(family, type) and no deny rule does, AUDIT 1 when an `audit` allow rule
covers it (only meaningful when granted), QUIET 1 when a deny rule
without `audit` covers it (only meaningful when not granted; `audit
deny` means "do not quiet"). HOW names the shapes of the rules that
cover the query (`all`, `family`, `type`, `pair`, `protocol`, joined by
`+`), `none` when no rule does. The Rust test derives the decision and
the audit record from these and the mode; nothing here comes from
Rampart.

A rule covers (family, type) when its domain is the family (or it has
none) and its type is the type (or it has none), with these compile
semantics of apparmor_parser 3.0.8 (Debian 12) for the 3.0 ABI
features (whose `network` has `af_mask` and `af_unix`), each seen in
its `-D rule-exprs` output on small profiles, never taken from Rampart:
- the family and type words are the Linux numbers (linux/socket.h,
  linux/net.h): `network NAME,` compiles to family NAME's number for
  each of python3-apparmor's domain words (checked one by one), and
  stream 1, dgram 2, raw 3, rdm 4, seqpacket 5, packet 10; `decnet` and
  `dccp` are not words of either (the parser refuses them);
- `network,` compiles to every family 0..45 (AF_MAX 46, decnet 12
  included) and every type (0..15, or any type for `audit network,`
  and `deny network,`);
- `network FAMILY,` to that family with the six named types only (1, 2,
  3, 4, 5, 10): not type 0, not dccp (6), not 7..9;
- `network TYPE,` to that type in every family the parser names, 0..45
  but decnet (12): `network stream,` does not cover decnet stream;
- `network FAMILY TYPE,` to that one pair;
- a protocol word is compiled to a type: `tcp` to stream, `udp` to
  dgram, `icmp` to raw; without a family `tcp` and `udp` cover inet and
  inet6, `icmp` inet only (the parser refuses `inet6 icmp`, `unix tcp`
  and other families with a protocol word); the protocol itself is
  never part of the compiled rule;
- every profile compiled for these features has the network class
  (parser_regex.c always adds `mediates_extended_net`), so a profile
  without any network rule is granted no socket.
The kernel (net.c aa_match_to_prot) matches family then type, and stops
there unless the type's state carries AA_CONT_MATCH, which nothing
compiled by the 3.0 parser sets: the protocol is never consulted, so the
PROTOCOL column (0 or the family's usual protocol, sometimes a random
one) must not change any answer.

Skipped, not modelled:
- AF_UNIX queries of a profile that has (itself or through an include)
  any `unix` rule. The 3.0 parser compiles `unix` rules into the same
  class: every allow `unix` rule, whatever its permissions, also
  becomes a network rule for family unix and its type (all types
  without `type=`), `deny unix` rules do not, and the fine-grained
  rules end at the protocol, which the kernel's early match at the type
  never reaches. That is the parser's internal downgrade, not the rule
  text: those profiles' unix queries are left out (abstractions/base
  has `unix (create),`, so almost every shipped profile's are) and
  counted on stderr. Every other family of those profiles is asked: a
  `unix` rule compiles to family unix paths only (also checked with
  `-D rule-exprs`).
- Nothing else: no shipped profile has a protocol word; the synthetic
  ones do.

usage: pynet.py OUT_DIR SEED [ROUNDS]
ROUNDS (default 2) scales the other families drawn per profile and the
protocols asked per (family, type).
writes OUT_DIR/synthetic (profiles) and OUT_DIR/net.tsv
"""

import os
import sys

import apparmor.aa as aa
from apparmor.rule.network import network_domain_keywords, network_type_keywords

from peers import each_profile, profile_mode, start

# linux/socket.h AF_* numbers, 0..45 (AF_MAX 46 on x86-64 since mctp).
LINUX_FAMILIES = [
    "unspec", "unix", "inet", "ax25", "ipx", "appletalk", "netrom", "bridge", "atmpvc", "x25", "inet6",
    "rose", "decnet", "netbeui", "security", "key", "netlink", "packet", "ash", "econet", "atmsvc", "rds",
    "sna", "irda", "pppox", "wanpipe", "llc", "ib", "mpls", "can", "tipc", "bluetooth", "iucv", "rxrpc",
    "isdn", "phonet", "ieee802154", "caif", "alg", "nfc", "vsock", "kcm", "qipcrtr", "smc", "xdp", "mctp",
]
FAMILY = {name: i for i, name in enumerate(LINUX_FAMILIES)}
AF_UNIX, AF_INET, AF_DECNET, AF_INET6, AF_NETLINK, AF_PACKET = 1, 2, 12, 10, 16, 17
ALL_FAMILIES = range(len(LINUX_FAMILIES))
# python3-apparmor's domain words are the Linux names but decnet, in order.
assert network_domain_keywords == [f for f in LINUX_FAMILIES if f != "decnet"], network_domain_keywords

# linux/net.h SOCK_* numbers; socket() takes 0..10 (SOCK_MAX 11).
TYPE = {"stream": 1, "dgram": 2, "raw": 3, "rdm": 4, "seqpacket": 5, "packet": 10}
assert sorted(network_type_keywords) == sorted(TYPE), network_type_keywords
ALL_TYPES = range(11)
# the types a family-only rule compiles to
NAMED_TYPES = sorted(TYPE.values())
# the families a type-only rule compiles to
NAMED_FAMILIES = [f for f in ALL_FAMILIES if f != AF_DECNET]
# protocol words: the type they compile to, the families they cover
PROTOCOL = {"tcp": (1, (AF_INET, AF_INET6)), "udp": (2, (AF_INET, AF_INET6)), "icmp": (3, (AF_INET,))}

# The protocol a program usually passes for (family, type): IPPROTO_TCP,
# IPPROTO_UDP, IPPROTO_ICMP / IPPROTO_ICMPV6, NETLINK_KOBJECT_UEVENT,
# htons(ETH_P_ALL); 0 otherwise.
def usual_protocol(family, ty):
    if family in (AF_INET, AF_INET6):
        return {1: 6, 2: 17, 3: 1 if family == AF_INET else 58}.get(ty, 0)
    if family == AF_NETLINK:
        return 15
    if family == AF_PACKET:
        return 768
    return 0


# Synthetic profiles for what the shipped ones lack: deny and audit deny
# rules, audit allow rules, complain, kill, audit and unconfined modes,
# profiles without network rules, bare `network,`, family-only,
# type-only and family+type rules, protocol words, children and hats,
# and a profile with `unix` rules beside network ones.
SYNTHETIC = r"""
#include <tunables/global>

profile syn_net_enforce {
  network inet stream,
  network inet6 dgram,
  network unix,
  network netlink raw,
  network packet,
  audit network inet dgram,
  audit network bluetooth,
  deny network inet6 raw,
  deny network packet dgram,
  audit deny network packet raw,
  audit deny network netlink dgram,
  network can raw,
  network alg seqpacket,

  profile child {
    network inet6 stream,
    network inet,
    deny network inet stream,
  }

  ^hat {
    network raw,
    audit network netlink,
    audit deny network inet raw,
  }
}

profile syn_net_all {
  network,
  deny network inet6,
  audit network inet dgram,
  deny network packet,
  audit deny network netlink raw,
  audit deny network seqpacket,
}

profile syn_net_bare {
  network,
}

profile syn_net_family {
  network inet,
  network unix,
  network netlink,
  audit network packet,
  deny network inet raw,
  audit deny network unix dgram,
}

profile syn_net_type {
  network stream,
  audit network seqpacket,
  deny network inet stream,
  audit deny network unix stream,
  network rdm,
}

profile syn_net_protocol {
  network inet tcp,
  network udp,
  network icmp,
  audit network inet6 tcp,
  deny network inet6 udp,
}

profile syn_net_protocol_bare {
  network tcp,
  audit deny network inet icmp,
}

profile syn_net_pair {
  network inet stream,
  network inet6 stream,
  network netlink raw,
  network unix dgram,
  network packet packet,
  network bluetooth seqpacket,
  network unspec stream,
  network mctp dgram,
}

profile syn_net_deny_all {
  network inet stream,
  network unix,
  deny network,
}

profile syn_net_loud_deny_all {
  network,
  audit deny network,
}

profile syn_net_none {
  /etc/hostname r,
}

profile syn_net_none_complain flags=(complain) {
  capability chown,
}

profile syn_net_complain flags=(complain) {
  network inet stream,
  network unix,
  deny network inet dgram,
  audit deny network inet raw,
  audit network inet6 stream,
  deny network unix seqpacket,
}

profile syn_net_kill flags=(kill) {
  network inet stream,
  network inet6,
  deny network inet6 raw,
  audit network netlink raw,
  network unix stream,
}

profile syn_net_audit flags=(audit) {
  network inet stream,
  deny network inet dgram,
  audit deny network inet raw,
  network unix,
  deny network unix dgram,
}

profile syn_net_audit_complain flags=(complain, audit) {
  network inet stream,
  deny network inet dgram,
}

profile syn_net_unconfined flags=(unconfined) {
  network inet stream,
  deny network inet6,
}

profile syn_net_unix_rules {
  network inet stream,
  network unix stream,
  unix (create) type=dgram,
  deny network netlink,
}
"""


class Rule:
    """A profile's network rule as the parser compiles it."""

    def __init__(self, rule):
        self.deny, self.audit = rule.deny, rule.audit
        word = None if rule.all_type_or_protocols else rule.type_or_protocol
        family = None if rule.all_domains else FAMILY[rule.domain]
        if word in PROTOCOL:
            ty, fams = PROTOCOL[word]
            if family is not None and family not in fams:
                raise SystemExit("the parser refuses network %s %s" % (rule.domain, word))
            self.families = {family} if family is not None else set(fams)
            self.types = {ty}
            self.shape = "protocol"
        elif family is None and word is None:
            self.families, self.types, self.shape = set(ALL_FAMILIES), set(ALL_TYPES), "all"
        elif word is None:
            self.families, self.types, self.shape = {family}, set(NAMED_TYPES), "family"
        elif family is None:
            self.families, self.types, self.shape = set(NAMED_FAMILIES), {TYPE[word]}, "type"
        else:
            self.families, self.types, self.shape = {family}, {TYPE[word]}, "pair"
        self.named_family = family

    def covers(self, family, ty):
        return family in self.families and ty in self.types


def expect(rules, family, ty):
    """(GRANT, AUDIT, QUIET, HOW) for a (family, type)."""
    a = d = au = qu = False
    shapes = set()
    for r in rules:
        if r.covers(family, ty):
            shapes.add(r.shape)
            if r.deny:
                d = True
                qu = qu or not r.audit
            else:
                a = True
                au = au or r.audit
    grant = a and not d
    return grant, grant and au, not grant and qu, "+".join(sorted(shapes)) or "none"


def main():
    out_dir, rng, rounds, _ = start(SYNTHETIC)
    n = profiles = skipped = skipped_profiles = 0
    with open(os.path.join(out_dir, "net.tsv"), "w") as out:
        for store, top, name, prof in each_profile():
            filename = prof["filename"]
            kname = top if name == top else "%s//%s" % (top, name)
            raw = list(prof["network"].rules)
            unix_rules = len(prof["allow"]["unix"]) + len(prof["deny"]["unix"])
            for inc in aa.include_list_recursive(prof):
                raw.extend(aa.include[inc][inc]["network"].rules)
                unix_rules += len(aa.include[inc][inc]["allow"]["unix"]) + len(aa.include[inc][inc]["deny"]["unix"])
            rules = [Rule(r) for r in raw]
            mode, audit_all = profile_mode(prof)

            # families: fixed ones, the rules' own, decnet and
            # unspec (the edges of the type-only and all rules),
            # and a few others drawn at random; every type of each
            fams = {AF_UNIX, AF_INET, AF_INET6, AF_NETLINK, AF_PACKET, AF_DECNET, 0}
            fams |= {r.named_family for r in rules if r.named_family is not None}
            fams |= set(rng.sample(ALL_FAMILIES, 2 * rounds))
            if unix_rules:
                fams.discard(AF_UNIX)
                skipped += len(ALL_TYPES)
                skipped_profiles += 1

            profiles += 1
            for family in sorted(fams):
                for ty in ALL_TYPES:
                    grant, audit, quiet, how = expect(rules, family, ty)
                    protos = {0, usual_protocol(family, ty)}
                    if rounds > 2:
                        protos.add(rng.randrange(256))
                    for proto in sorted(protos):
                        out.write("\t".join([filename, kname, mode, audit_all, str(family), str(ty), str(proto),
                                             str(int(grant)), str(int(audit)), str(int(quiet)), how]) + "\n")
                        n += 1
    print("%d profiles, %d queries; unix left out of %d profiles with unix rules (%d family/type pairs)"
          % (profiles, n, skipped_profiles, skipped), file=sys.stderr)


if __name__ == "__main__":
    main()
