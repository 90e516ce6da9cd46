//! Conditional (boolean) expressions in infix, exactly as setools prints
//! them in `sesearch` output: `[ httpd_unified && httpd_enable_cgi ]:True`.
//!
//! setools converts the stored postfix expression with a precedence stack
//! (`!` 5, `==`/`!=` 4, `&&` 3, `^` 2, `||` 1), writes the operand popped
//! first on the left and parenthesizes a binary operation unless the
//! previous operator bound tighter. We reproduce that, quirks included, so
//! the text matches sesearch's.

use rampart_policy::{BoolId, CondExpr, Policy};

enum Node {
    Word(String),
    List(Vec<Node>),
}

fn word(s: &str) -> Node {
    Node::Word(s.to_owned())
}

/// The infix text of a postfix boolean expression; `<malformed>` if the
/// expression does not reduce (the engine then treats it as undefined).
pub fn infix(policy: &Policy, expr: &[CondExpr]) -> String {
    let mut stack: Vec<Node> = Vec::new();
    let mut prev = 5;
    for e in expr {
        let (text, prec) = match e {
            CondExpr::Bool(b) => {
                stack.push(Node::Word(bool_name(policy, *b).to_owned()));
                continue;
            }
            CondExpr::Not => ("!", 5),
            CondExpr::Or => ("||", 1),
            CondExpr::And => ("&&", 3),
            CondExpr::Xor => ("^", 2),
            CondExpr::Eq => ("==", 4),
            CondExpr::Neq => ("!=", 4),
        };
        if matches!(e, CondExpr::Not) {
            let Some(operand) = stack.pop() else { return "<malformed>".into() };
            let sub = match operand {
                Node::List(_) => vec![word(text), word("("), operand, word(")")],
                Node::Word(_) => vec![word(text), operand],
            };
            stack.push(Node::List(sub));
        } else {
            let (Some(first), Some(second)) = (stack.pop(), stack.pop()) else { return "<malformed>".into() };
            let sub = if prev > prec {
                vec![first, word(text), second]
            } else {
                vec![word("("), first, word(text), second, word(")")]
            };
            stack.push(Node::List(sub));
        }
        prev = prec;
    }
    if stack.len() != 1 {
        return "<malformed>".into();
    }
    let mut words = Vec::new();
    flatten(&stack, &mut words);
    words.join(" ")
}

fn flatten(nodes: &[Node], out: &mut Vec<String>) {
    for n in nodes {
        match n {
            Node::Word(w) => out.push(w.clone()),
            Node::List(l) => flatten(l, out),
        }
    }
}

pub fn bool_name(policy: &Policy, b: BoolId) -> &str {
    policy.bools.get(b.index()).map_or("?", |b| b.name.as_str())
}

/// The booleans an expression uses, sorted by name, without repeats.
pub fn bools_used(policy: &Policy, expr: &[CondExpr]) -> Vec<BoolId> {
    let mut v: Vec<BoolId> = expr
        .iter()
        .filter_map(|e| match e {
            CondExpr::Bool(b) => Some(*b),
            _ => None,
        })
        .collect();
    v.sort_by(|a, b| bool_name(policy, *a).cmp(bool_name(policy, *b)));
    v.dedup();
    v
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// Every conditional expression prints as sesearch prints it.
    #[test]
    #[ignore = "needs the system policy and setools: compared with sesearch"]
    fn system_policy_matches_sesearch() {
        let (path, policy) = crate::testing::system_policy();
        let text = crate::testing::tool("sesearch", &[path.as_str(), "-A", "-T", "--auditallow", "--dontaudit"]);
        let theirs: BTreeSet<String> = text
            .lines()
            .filter_map(|l| l.split_once("; [ ").map(|(_, e)| e))
            .filter_map(|e| e.rsplit_once(" ]:").map(|(e, _)| e.to_owned()))
            .collect();
        let ours: BTreeSet<String> = policy.conds.iter().map(|c| infix(&policy, &c.expr)).collect();
        let missing: Vec<_> = ours.difference(&theirs).collect();
        let extra: Vec<_> = theirs.difference(&ours).collect();
        assert!(missing.is_empty() && extra.is_empty(), "ours only: {missing:#?}\nsesearch only: {extra:#?}");
    }
}
