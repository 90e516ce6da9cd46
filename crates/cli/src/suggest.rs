//! "Did you mean" hints for misspelled names in the policy (booleans,
//! classes, permissions). Misspelled commands and options get clap's own
//! hints ([`crate::cli`]); these are for the names a query gives, which
//! only the loaded policy knows.

/// `" (did you mean `x`?)"` for the candidate closest to `input` by edit
/// distance (an adjacent transposition counts as one edit), if one is
/// close enough; otherwise an empty string.
pub fn did_you_mean<'a>(input: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    let limit = (input.chars().count() / 3).max(1);
    let best = candidates
        .into_iter()
        .map(|c| (strsim::osa_distance(input, c), c))
        .filter(|&(d, _)| d <= limit)
        .min_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(b.1)));
    match best {
        Some((_, c)) => format!(" (did you mean `{c}`?)"),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names_only() {
        assert_eq!(did_you_mean("raed", ["read", "write", "open"]), " (did you mean `read`?)");
        assert_eq!(did_you_mean("chek", ["check", "explain"]), " (did you mean `check`?)");
        assert_eq!(did_you_mean("zzzzzz", ["read", "write"]), "");
    }
}
