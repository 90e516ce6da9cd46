#!/usr/bin/python3
"""Independent expectations for crates/apparmor's reference test.

Reads the shipped profiles with python3-apparmor (what aa-logprof uses:
apparmor.aa parses profiles, includes and variables; apparmor.aare.AARE
matches paths; FileRule carries owner/deny/audit and permissions),
generates paths from every file rule, and writes for each query what the
profile text grants according to those classes:

    FILE<TAB>PROFILE<TAB>MODE<TAB>PATH<TAB>OWNER<TAB>ALLOW<TAB>DENY<TAB>AUDIT<TAB>QUIET<TAB>AARE<TAB>EXEC

FILE is the profile file (to compile with apparmor_parser), MODE the
profile's mode from its flags (enforce, complain or kill), ALLOW the
letters of rwaxmlk granted for that owner case before deny rules, DENY
the letters of matching deny rules, AUDIT those of matching audit allow
rules (`audit deny` means "do not quiet"), QUIET those of matching deny
rules without audit. Matching uses apparmor_parser's glob conversion
(parser_regex, from the parser's source); AARE is 1 when AARE.match
gives the same sets, 0 where python3-apparmor's matcher differs from it.
EXEC is the exec qualifier of the matching exec rule as the kernel sees
it (see kernel_exec_mode), `-` for none or a deny, `?` when several
different exec rules match (the parser's precedence decides). The Rust test derives
the expected decision from these sets; nothing here comes from Rampart.

usage: pyref.py OUT PATHS_PER_PROFILE SEED

For the benchmark (docs/benchmarks.md): PYREF_TIME=1 also times
python3-apparmor's matcher over every query (AARE.match on each rule of
the profile, as FileRuleset.get_perms_for_path does) and prints
`aare_ns_per_query N`; PYREF_RULES=FILE writes each profile's rules as
FILE<TAB>PROFILE<TAB>OWNER<TAB>DENY<TAB>LETTERS<TAB>REGEX (the parser's
glob conversion, unanchored) for a regex-crate matcher.

PYREF_ATTACH=FILE also writes attachment expectations, per profile
directory (STORE is etc or extra):
    STORE<TAB>PATH<TAB>EXPECTED
EXPECTED is the top-level profile whose attachment matches PATH (a
profile named by a plain path, without attachment, matches exactly that
path and wins outright, as in the kernel's find_attach), `unconfined`
when none does, `?` when several globs match (then the kernel ranks them
by the length of their literal left match).
"""

import os
import time

import random
import re
import sys

import apparmor.aa as aa
from apparmor.aare import AARE
from apparmor.rule.file import FileRule

LETTERS = "rwaxmlk"


def perms_letters(rule):
    """The letters of rwaxmlk a FileRule grants (w implies a: the parser
    compiles w as write and append; any exec mode is x)."""
    if rule.all_perms:
        return set("rwamlk")
    s = set()
    for p in rule.perms or ():
        if p == "w":
            s |= {"w", "a"}
        elif p == "link":  # `link A -> B` rules
            s.add("l")
        elif p in "ramlk":
            s.add(p)
    if rule.exec_perms:
        s.add("x")
        # apparmor_parser compiles `ix`/`pix`/`cix` exactly as `mix`/...:
        # an inheriting exec implies m (tests/parser_equivalence.rs)
        if "i" in rule.exec_perms:
            s.add("m")
    return s


def expand_vars(regex, variables):
    """Expands @{VAR} references as apparmor_parser does
    (parser_variable.c, expand_by_alternations): the first reference
    first, again until none is left; a one-value variable is substituted,
    a multi-value one becomes {v1,v2}, each value losing its leading
    slashes when the text before ends in `/` and its trailing slashes when
    the text after starts with `/`. Then filter_slashes."""
    for _ in range(32):
        m = re.search(r"@\{([^}]+)\}", regex)
        if not m:
            return filter_slashes(regex)
        values = sorted(v.strip('"') for v in variables.get("@{%s}" % m.group(1), ()))
        if not values:
            return None
        prefix, suffix = regex[: m.start()], regex[m.end():]
        if len(values) == 1:
            regex = prefix + values[0] + suffix
            continue
        parts = []
        for v in values:
            if prefix.endswith("/"):
                v = v.lstrip("/")
            if suffix.startswith("/"):
                v = v.rstrip("/")
            parts.append(v)
        regex = prefix + "{" + ",".join(parts) + "}" + suffix
    return None


def filter_slashes(path):
    """apparmor_parser's filter_slashes (parser_regex.c): runs of `/` are
    one, except a leading `//` not followed by a third `/`."""
    if len(path) >= 3 and path[0] == "/" and path[1] == "/" and path[2] != "/":
        return "//" + re.sub("//+", "/", path[2:])
    return re.sub("//+", "/", path)


def alternatives(regex):
    """Expands {a,b} alternations (nested) into plain glob strings."""
    i = regex.find("{")
    if i < 0:
        return [regex]
    depth, j = 0, i
    while j < len(regex):
        if regex[j] == "{":
            depth += 1
        elif regex[j] == "}":
            depth -= 1
            if depth == 0:
                break
        j += 1
    if j >= len(regex):
        return [regex]
    body, parts, depth, start = regex[i + 1 : j], [], 0, 0
    for k, c in enumerate(body):
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(body[start:k])
            start = k + 1
    parts.append(body[start:])
    out = []
    for p in parts:
        out.extend(alternatives(regex[:i] + p + regex[j + 1 :]))
    return out[:64]


def instantiate(glob, rng):
    """A concrete path a glob (without braces) is written to match."""
    out, i = [], 0
    while i < len(glob):
        c = glob[i]
        if glob.startswith("**", i):
            out.append(rng.choice(["a", "a/b", "x.y/z", "deep/er/f"]))
            i += 2
        elif c == "*":
            out.append(rng.choice(["x", "abc", "f.conf", "1"]))
            i += 1
        elif c == "?":
            out.append(rng.choice("qZ9"))
            i += 1
        elif c == "[":
            j = glob.find("]", i + 2)
            if j < 0:
                return None
            cls = glob[i + 1 : j]
            neg = cls.startswith("^")
            cls = cls[1:] if neg else cls
            chars = set()
            k = 0
            while k < len(cls):
                if k + 2 < len(cls) and cls[k + 1] == "-":
                    chars |= {chr(x) for x in range(ord(cls[k]), ord(cls[k + 2]) + 1)}
                    k += 3
                else:
                    chars.add(cls[k])
                    k += 1
            pool = sorted(chars) if not neg else [x for x in "abcxyz019_-" if x not in chars]
            if not pool:
                return None
            out.append(rng.choice(pool))
            i = j + 1
        elif c == "\\" and i + 1 < len(glob):
            out.append(glob[i + 1])
            i += 2
        else:
            out.append(c)
            i += 1
    path = "".join(out)
    return path if path.startswith("/") and "\0" not in path else None


def mutations(path, rng):
    """Near misses: the edges of globs and literal neighbours."""
    out = [path + "x", path + "/", path + "/sub", path.rstrip("/") or "/"]
    if len(path) > 2:
        k = rng.randrange(1, len(path))
        out.append(path[:k] + rng.choice("aZ./") + path[k + 1 :])
        out.append(path[:k])
    parent = path.rstrip("/").rsplit("/", 1)[0] + "/"
    out.append(parent)
    return out


def kernel_exec_mode(rule, profile):
    """The exec qualifier the kernel sees for a FileRule's exec_perms:
    the same letters, except that a rule with a target becomes an x-table
    entry (`px->NAME`, `Pix->NAME`...: the parser replaces the type by a
    table index, so c/C read as p/P), a child target named PROFILE//NAME
    (parser_regex.c add_named_transition)."""
    m = rule.exec_perms
    if not rule.target:
        return m
    name = rule.target.regex
    if m[0] in "cC":
        name = "%s//%s" % (profile, name)
        m = ("p" if m[0] == "c" else "P") + m[1:]
    return "%s->%s" % (m, name)


def parser_regex(glob):
    """The Python regex of apparmor_parser's convert_aaregex_to_pcre
    (parser_regex.c, 3.0) for a glob: unlike AARE, `*` and `**` need a
    first character only when the output so far ends in `/` and the glob
    continues with `/` or ends (so `/a/*b` matches `/a/b`, and `{x/,y/}*`
    may match nothing)."""
    out, i, esc, incls, depth = [], 0, False, False, 0
    while i < len(glob):
        c = glob[i]
        if esc:
            out.append(re.escape(c))
            esc = False
        elif c == "\\":
            esc = True
        elif incls:
            out.append(c)
            if c == "]":
                incls = False
        elif c == "*":
            if out and out[-1].endswith("/"):
                j = i
                while j < len(glob) and glob[j] == "*":
                    j += 1
                if j == len(glob) or glob[j] == "/":
                    out.append("[^/\\x00]")
            if glob.startswith("**", i):
                out.append("[^\\x00]*")
                i += 1
            else:
                out.append("[^/\\x00]*")
        elif c == "?":
            out.append("[^/\\x00]")
        elif c == "[":
            incls = True
            out.append("[")
        elif c == "{":
            depth += 1
            out.append("(")
        elif c == "}":
            depth -= 1
            out.append(")")
        elif c == "," and depth > 0:
            out.append("|")
        else:
            out.append(re.escape(c))
        i += 1
    return re.compile("".join(out) + r"\Z")


class Prepared:
    """A rule with its variable-expanded AAREs and literal prefixes."""

    def __init__(self, rule, variables):
        self.rule = rule
        self.letters = perms_letters(rule)
        if rule.raw_rule in IMPLIED and "w" in self.letters:
            self.letters = {"w"}
        g = expand_vars(rule.path.regex, variables) if not rule.all_perms else "/**"
        self.globs = [g] if g else []
        # is_path=False: after expansion a glob may start with `{`
        self.aares = [AARE(g, False) for g in self.globs]
        self.parser = [parser_regex(g) for g in self.globs]
        self.prefixes = [re.split(r"[*?\[{\\]", g)[0] for g in self.globs]

    def matches(self, path):
        """(AARE's answer, apparmor_parser's conversion's answer)."""
        a = p = False
        for pre, aare, rx in zip(self.prefixes, self.aares, self.parser):
            if path.startswith(pre):
                a = a or aare.match(path)
                p = p or bool(rx.match(path))
        return a, p


# Rules apparmor_parser adds by itself (parser_policy.c, add_proc_access):
# to hats and profiles with hats, for change_hat; to profiles with
# change_profile rules, for change_profile. They are built with
# new_entry(path, AA_MAY_READ or AA_MAY_WRITE): the parser's AA_MAY_*
# bits are the owner half, and its write bit does not carry append.
PROC_PROBE = ["owner /proc/*/attr/apparmor/ r,", "owner /sys/module/apparmor/parameters/enabled r,"]
HAT_RULES = PROC_PROBE + ["owner /proc/[0-9]*/attr/{apparmor/,}current w,"]
CHANGE_PROFILE_RULES = PROC_PROBE + ["owner /proc/*/attr/{apparmor/,}{current,exec} w,"]
IMPLIED = set(HAT_RULES + CHANGE_PROFILE_RULES)


def profile_rules(prof, is_hat, has_children):
    rules = list(prof["file"].rules)
    change_profile = bool(prof["change_profile"].rules)
    for inc in aa.include_list_recursive(prof):
        rules.extend(aa.include[inc][inc]["file"].rules)
        change_profile |= bool(aa.include[inc][inc]["change_profile"].rules)
    if is_hat or has_children:
        rules.extend(FileRule.parse(r) for r in HAT_RULES)
    if change_profile:
        rules.extend(FileRule.parse(r) for r in CHANGE_PROFILE_RULES)
    return rules


def write_attach(out_path, rng):
    with open(out_path, "w") as out:
        for label, store in (("etc", aa.aa), ("extra", aa.extras)):
            exact, globs = {}, []
            for top in sorted(store):
                prof = store[top][top]
                filename = prof["filename"]
                att = prof["attachment"]
                # a name with glob characters is its own attachment
                # (parser_regex.c process_profile_name_xmatch)
                if not att and top.startswith("/") and re.search(r"[*?\[{]", top):
                    att = top
                if att:
                    incs = aa.include_list_recursive(aa.active_profiles.files[filename]) if filename in aa.active_profiles.files else []
                    variables = aa.active_profiles.get_all_merged_variables(filename, incs) if filename in aa.active_profiles.files else {}
                    # profile names and attachments are not filter_slashes'ed
                    g = expand_vars(att, variables)
                    if g:
                        globs.append((top, g, parser_regex(g)))
                elif top.startswith("/"):
                    exact[top] = top
            paths = []
            for _, g, _ in globs:
                for alt in alternatives(g):
                    p = instantiate(alt, rng)
                    if p:
                        paths.append(p)
                        paths.extend(rng.sample(mutations(p, rng), 2))
            for name in exact:
                paths.append(name)
                paths.extend(rng.sample(mutations(name, rng), 2))
            for path in dict.fromkeys(paths):
                if "//" in path:
                    continue
                if path in exact:
                    want = exact[path]
                else:
                    hits = [top for top, _, rx in globs if rx.match(path)]
                    want = hits[0] if len(hits) == 1 else "unconfined" if not hits else "?"
                out.write("%s\t%s\t%s\n" % (label, path, want))


def main():
    out_path, per_profile, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    aa.init_aa()
    aa.read_profiles()
    aa.read_inactive_profiles()
    rng = random.Random(seed)
    n = 0
    timed = []  # (prepared, [(path, owner)])
    rules_out = open(os.environ["PYREF_RULES"], "w") if os.environ.get("PYREF_RULES") else None
    with open(out_path, "w") as out:
        for store in (aa.aa, aa.extras):
            for top in sorted(store):
                for name in sorted(store[top]):
                    prof = store[top][name]
                    filename = prof["filename"]
                    if not filename:
                        continue
                    incs = aa.include_list_recursive(aa.active_profiles.files[filename]) if filename in aa.active_profiles.files else []
                    variables = aa.active_profiles.get_all_merged_variables(filename, incs) if filename in aa.active_profiles.files else {}
                    is_hat = name != top and not prof["profile"]
                    has_children = name == top and len(store[top]) > 1
                    prepared = [Prepared(r, variables) for r in profile_rules(prof, is_hat, has_children)]
                    if rules_out:
                        kn = top if name == top else "%s//%s" % (top, name)
                        for p in prepared:
                            for rx in p.parser:
                                rules_out.write("\t".join([filename, kn, "1" if p.rule.owner else "0", "1" if p.rule.deny else "0",
                                                            "".join(c for c in LETTERS if c in p.letters) or "-",
                                                            rx.pattern[: -len(r"\Z")]]) + "\n")
                    queries = []
                    timed.append((prepared, queries))
                    # The kernel's hierarchical name: child profiles and hats
                    # are `parent//name`.
                    kname = top if name == top else "%s//%s" % (top, name)
                    flags = prof["flags"] or ""
                    mode = "complain" if "complain" in flags else "kill" if "kill" in flags else "enforce"
                    seeds = []
                    for p in prepared:
                        for g in p.globs:
                            for alt in alternatives(g):
                                path = instantiate(alt, rng)
                                if path:
                                    seeds.append(path)
                    rng.shuffle(seeds)
                    paths = []
                    for s in seeds[: per_profile // 3 + 1]:
                        paths.append(s)
                        paths.extend(rng.sample(mutations(s, rng), 2))
                    # the kernel's names never hold `//` (d_path normalizes)
                    paths = [p for p in dict.fromkeys(paths) if "//" not in p][:per_profile]
                    for path in paths:
                        for owner in (True, False):
                            queries.append((path, owner))
                            # [AARE-based, parser-conversion-based]
                            sets = [[set(), set(), set(), set()], [set(), set(), set(), set()]]
                            execs, exec_denied = set(), False
                            for p in prepared:
                                r = p.rule
                                if r.owner and not owner:
                                    continue
                                for k, hit in enumerate(p.matches(path)):
                                    if not hit:
                                        continue
                                    allow, deny, audit, quiet = sets[k]
                                    if k == 1 and r.exec_perms:
                                        if r.deny:
                                            exec_denied = True
                                        else:
                                            execs.add(kernel_exec_mode(r, kname))
                                    if r.deny:
                                        # parser_regex.c process_dfa_entry: a deny
                                        # rule's link bit is not put on the path's
                                        # own entry (it lives on the link pair's)
                                        deny |= p.letters - {"l"}
                                        if not r.audit:
                                            quiet |= p.letters - {"l"}
                                    else:
                                        allow |= p.letters
                                        if r.audit:
                                            audit |= p.letters
                            fmt = lambda s: "".join(c for c in LETTERS if c in s) or "-"
                            summary = lambda t: (t[0] - t[1], t[2], t[3])
                            same = "1" if summary(sets[0]) == summary(sets[1]) else "0"
                            allow, deny, audit, quiet = sets[1]
                            if exec_denied or not execs:
                                xmode = "-"
                            elif len(execs) == 1:
                                xmode = execs.pop()
                            else:
                                xmode = "?"  # overlapping exec rules: the parser's precedence decides
                            out.write("\t".join([filename, kname, mode, path, "1" if owner else "0",
                                                 fmt(allow), fmt(deny), fmt(audit), fmt(quiet), same, xmode]) + "\n")
                            n += 1
    print(n, file=sys.stderr)
    if rules_out:
        rules_out.close()
    if os.environ.get("PYREF_ATTACH"):
        write_attach(os.environ["PYREF_ATTACH"], rng)
    if os.environ.get("PYREF_TIME"):
        count, t0 = 0, time.perf_counter_ns()
        for prepared, queries in timed:
            for path, owner in queries:
                allow = set()
                for p in prepared:
                    if p.rule.owner and not owner:
                        continue
                    if any(a.match(path) for a in p.aares):
                        allow |= p.letters
                count += 1
        elapsed = time.perf_counter_ns() - t0
        print("aare_ns_per_query %d over %d queries" % (elapsed // max(count, 1), count))


if __name__ == "__main__":
    main()
