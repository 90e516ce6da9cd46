//! What the lookup index may use about a parsed pattern: its literal
//! prefix, and whether it is one literal string.

use super::Node;

/// What the lookup index may use about a pattern.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Shape {
    /// Every subject the pattern matches starts with these bytes.
    pub prefix: Vec<u8>,
    /// The pattern matches exactly this string (and, by PCRE's `$`, the
    /// string followed by one newline), nothing else.
    pub literal: Option<Vec<u8>>,
}

/// The literal prefix of `node` and whether `node` matches exactly that
/// string (`complete`).
fn prefix_of(node: &Node) -> (Vec<u8>, bool) {
    match node {
        Node::Empty => (Vec::new(), true),
        Node::Literal(b) => (vec![*b], true),
        Node::Class(s) => match s.single() {
            Some(b) => (vec![b], true),
            None => (Vec::new(), false),
        },
        Node::Group(n) => prefix_of(n),
        Node::Concat(v) => {
            let mut out = Vec::new();
            for n in v {
                let (p, complete) = prefix_of(n);
                out.extend_from_slice(&p);
                if !complete {
                    return (out, false);
                }
            }
            (out, true)
        }
        Node::Alt(v) => {
            let parts: Vec<(Vec<u8>, bool)> = v.iter().map(prefix_of).collect();
            let Some((first, _)) = parts.first() else { return (Vec::new(), true) };
            let all_same = parts.iter().all(|(p, c)| *c && p == first);
            if all_same {
                return (first.clone(), true);
            }
            let mut len = first.len();
            for (p, _) in &parts[1..] {
                len = len.min(first.iter().zip(p.iter()).take_while(|(a, b)| a == b).count());
            }
            (first[..len].to_vec(), false)
        }
        Node::Repeat { node, min, max, .. } => {
            let (p, complete) = prefix_of(node);
            if complete && Some(*min) == *max {
                let n = usize::try_from(*min).unwrap_or(0);
                return (p.repeat(n), true);
            }
            if *min >= 1 {
                (p, false)
            } else {
                (Vec::new(), false)
            }
        }
        Node::Start | Node::End(_) | Node::EndAbsolute | Node::WordBoundary(_) => (Vec::new(), false),
    }
}

/// Whether every match of `node` must start at offset 0 (each branch
/// begins with `^`/`\A`), so the literal prefix is a prefix of the
/// subject and not just of some substring.
fn anchored_at_start(node: &Node) -> bool {
    match node {
        Node::Start => true,
        Node::Group(n) => anchored_at_start(n),
        Node::Concat(v) => v.first().is_some_and(anchored_at_start),
        Node::Alt(v) => v.iter().all(anchored_at_start),
        _ => false,
    }
}

/// Strips the leading `^` of an anchored concatenation (for prefix
/// computation).
fn after_start(node: &Node) -> Option<Vec<&Node>> {
    match node {
        Node::Concat(v) if v.first().is_some_and(|n| matches!(n, Node::Start)) => Some(v[1..].iter().collect()),
        Node::Start => Some(Vec::new()),
        _ => None,
    }
}

/// Analyses a parsed anchored file_contexts pattern (`^...$`).
pub(crate) fn shape(node: &Node) -> Shape {
    if !anchored_at_start(node) {
        return Shape::default();
    }
    let branches: Vec<&Node> = match node {
        Node::Alt(v) => v.iter().collect(),
        other => vec![other],
    };
    let mut prefixes = Vec::new();
    let mut literal = None;
    for b in &branches {
        let Some(rest) = after_start(b) else {
            // Anchored through a group: `(^a|^b)...`; no prefix claimed.
            return Shape::default();
        };
        let mut out = Vec::new();
        for n in &rest {
            let (p, complete) = prefix_of(n);
            out.extend_from_slice(&p);
            if !complete {
                break;
            }
        }
        if branches.len() == 1 {
            // Exactly `^LITERAL$`.
            let is_lit = rest
                .split_last()
                .is_some_and(|(last, init)| matches!(last, Node::End(_)) && init.iter().all(|n| prefix_of(n).1));
            if is_lit {
                let mut s = Vec::new();
                for n in rest.iter().take(rest.len() - 1) {
                    s.extend_from_slice(&prefix_of(n).0);
                }
                literal = Some(s);
            }
        }
        prefixes.push(out);
    }
    let mut prefix = prefixes.first().cloned().unwrap_or_default();
    for p in &prefixes[1..] {
        let n = prefix.iter().zip(p.iter()).take_while(|(a, b)| a == b).count();
        prefix.truncate(n);
    }
    Shape { prefix, literal }
}
