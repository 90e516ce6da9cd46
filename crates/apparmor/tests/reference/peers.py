"""What pysignal.py, pyptrace.py and pynet.py share: their arguments and
the profiles they read (`start`), peer globs as the parser expands them,
and names generated from them (matching ones and near misses), for the
signal, ptrace and network reference tests of crates/apparmor. Nothing
here comes from Rampart."""

import os
import random
import re
import sys

import apparmor.aa as aa


def start(synthetic):
    """Reads OUT_DIR SEED [ROUNDS] from the command line and the shipped
    profiles with python3-apparmor, plus `synthetic` written to
    OUT_DIR/synthetic and read the same way; returns (OUT_DIR, a random
    generator seeded with SEED, ROUNDS, the synthetic profiles' file)."""
    out_dir, seed = sys.argv[1], int(sys.argv[2])
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    aa.init_aa()
    aa.read_profiles()
    aa.read_inactive_profiles()
    path = os.path.join(out_dir, "synthetic")
    with open(path, "w") as f:
        f.write(synthetic)
    aa.read_profile(path, True)
    return out_dir, random.Random(seed), rounds, path


def expand_vars(peer, kname, variables):
    """Expands @{profile_name} (the escaped hierarchical name: returned
    apart, as the exact name, when the name holds glob characters that
    AARE cannot take escaped) and other variables (parser_variable.c:
    one value substituted, several become {v1,v2}). Returns (glob, exact)."""
    esc = re.search(r"[{}\[\]*?\\]", kname)
    if "@{profile_name}" in peer:
        if esc:
            if peer != "@{profile_name}":
                raise SystemExit("unmodelled peer %s in %s" % (peer, kname))
            return None, kname
        peer = peer.replace("@{profile_name}", kname)
    for _ in range(32):
        m = re.search(r"@\{([^}]+)\}", peer)
        if not m:
            return peer, None
        values = sorted(v.strip('"') for v in variables.get("@{%s}" % m.group(1), ()))
        if not values:
            raise SystemExit("undefined variable in peer %s of %s" % (peer, kname))
        sub = values[0] if len(values) == 1 else "{" + ",".join(values) + "}"
        peer = peer[: m.start()] + sub + peer[m.end():]
    raise SystemExit("variable loop in peer %s" % peer)


def alternatives(glob):
    """Expands {a,b} alternations (nested) into plain globs."""
    i = glob.find("{")
    if i < 0:
        return [glob]
    depth, j = 0, i
    while j < len(glob):
        if glob[j] == "{":
            depth += 1
        elif glob[j] == "}":
            depth -= 1
            if depth == 0:
                break
        j += 1
    body, parts, depth, start = glob[i + 1: j], [], 0, 0
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
        out.extend(alternatives(glob[:i] + p + glob[j + 1:]))
    return out[:32]


def instantiate(glob, rng):
    """A name a glob (without braces) is written to match."""
    out, i = [], 0
    while i < len(glob):
        c = glob[i]
        if glob.startswith("**", i):
            out.append(rng.choice(["a", "a/b", "x//y", "q.r"]))
            i += 2
        elif c == "*":
            out.append(rng.choice(["x", "abc", "d-e", "1", "&z"]))
            i += 1
        elif c == "?":
            out.append(rng.choice("qZ9&"))
            i += 1
        elif c == "[":
            j = glob.find("]", i + 2)
            cls = glob[i + 1: j]
            neg = cls.startswith("^")
            cls = cls[1:] if neg else cls
            chars, k = set(), 0
            while k < len(cls):
                if k + 2 < len(cls) and cls[k + 1] == "-":
                    chars |= {chr(x) for x in range(ord(cls[k]), ord(cls[k + 2]) + 1)}
                    k += 3
                else:
                    chars.add(cls[k])
                    k += 1
            pool = sorted(chars) if not neg else [x for x in "abcxyz019_-" if x not in chars]
            out.append(rng.choice(pool))
            i = j + 1
        elif c == "\\" and i + 1 < len(glob):
            out.append(glob[i + 1])
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def near_misses(name, rng):
    out = [name + "x", name[:-1], name + "//x", "x" + name, name.upper()]
    if len(name) > 2:
        k = rng.randrange(len(name))
        out.append(name[:k] + rng.choice("aZ/-") + name[k + 1:])
    return [n for n in out if n]


def stack(names):
    """The kernel's name of a stack: components sorted, `//&` between."""
    return "//&".join(sorted({c for n in names for c in n.split("//&")}))


def label_match(sets_of, peer):
    """(GRANT, AUDIT, QUIET, HOW) for a peer label, as the kernel's
    aa_label_match matches it: the whole name of its visible components
    (`:ns:` ones are outside the profile's view), then, if that is not
    granted, each component on its own, all of which must grant.
    `sets_of(name)` gives (allowed, denied, audit, quiet) for one name."""
    comps = [c for c in peer.split("//&") if not c.startswith(":")]
    if not comps:
        return True, False, False, "invisible"
    a, d, au, qu = sets_of("//&".join(comps))
    if a and not d:
        return True, au, False, "whole"
    if len(comps) == 1:
        return False, False, qu, "whole"
    each = [sets_of(c) for c in comps]
    grant = all(a and not d for a, d, _, _ in each)
    audit = grant and any(au for _, _, au, _ in each)
    quiet = not grant and all(qu for _, _, _, qu in each)
    return grant, audit, quiet, "components"


def each_profile():
    """Every profile, child and hat python3-apparmor read from a file:
    (its store, its top profile's name, its own name, the profile), in
    name order."""
    for store in (aa.aa, aa.extras):
        for top in sorted(store):
            for name in sorted(store[top]):
                prof = store[top][name]
                if prof["filename"]:
                    yield store, top, name, prof


def profile_mode(prof):
    """MODE (enforce, complain, kill or unconfined) and AUDIT_ALL ("1"
    for `flags=(audit)`) from a profile's flags."""
    flags = [f.strip() for f in re.split(r"[ ,]+", prof["flags"] or "") if f.strip()]
    mode = next((m for m in ("complain", "kill", "unconfined") if m in flags), "enforce")
    return mode, "1" if "audit" in flags else "0"
