//! "Did you mean" hints for misspelled names.

/// `" (did you mean `x`?)"` for the candidate closest to `input` by edit
/// distance, if one is close enough; otherwise an empty string.
pub fn did_you_mean<'a>(input: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    let limit = (input.chars().count() / 3).max(1);
    let best = candidates
        .into_iter()
        .map(|c| (distance(input, c), c))
        .filter(|&(d, _)| d <= limit)
        .min_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(b.1)));
    match best {
        Some((_, c)) => format!(" (did you mean `{c}`?)"),
        None => String::new(),
    }
}

/// Edit distance over chars counting an adjacent transposition as one
/// edit (optimal string alignment).
fn distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let w = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * w];
    for i in 0..=a.len() {
        for j in 0..=b.len() {
            d[i * w + j] = if i == 0 || j == 0 {
                i + j
            } else {
                let mut v = (d[(i - 1) * w + j - 1] + usize::from(a[i - 1] != b[j - 1]))
                    .min(d[(i - 1) * w + j] + 1)
                    .min(d[i * w + j - 1] + 1);
                if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                    v = v.min(d[(i - 2) * w + j - 2] + 1);
                }
                v
            };
        }
    }
    d[a.len() * w + b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names_only() {
        assert_eq!(did_you_mean("raed", ["read", "write", "open"]), " (did you mean `read`?)");
        assert_eq!(did_you_mean("chek", ["check", "explain"]), " (did you mean `check`?)");
        assert_eq!(did_you_mean("zzzzzz", ["read", "write"]), "");
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("raed", "read"), 1);
    }
}
