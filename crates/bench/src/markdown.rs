//! Markdown tables, as both benchmark reports (`bench seeds`:
//! crate::report; `bench enforce`: crate::enforce::report) write them
//! into docs/benchmarks.md: a header row, its separator, one row per
//! line.

use std::fmt::Display;

/// 1234567.8 -> "1,234,568".
pub fn group(v: f64) -> String {
    let n = v.round().abs() as u64;
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if v < 0.0 {
        out.insert(0, '-');
    }
    out
}

/// The "What the figures say" list both reports end a section with;
/// nothing when there is nothing to say.
pub fn findings(out: &mut String, lines: &[String]) {
    if lines.is_empty() {
        return;
    }
    out.push_str("What the figures say:\n\n");
    for l in lines {
        out.push_str("- ");
        out.push_str(l);
        out.push('\n');
    }
    out.push('\n');
}

/// A table being written into a report.
pub struct Table<'a> {
    out: &'a mut String,
}

impl<'a> Table<'a> {
    /// Starts a table in `out`: `| a | b |` and `|---|---|`.
    pub fn new(out: &'a mut String, columns: &[&str]) -> Table<'a> {
        out.push('|');
        for c in columns {
            out.push(' ');
            out.push_str(c);
            out.push_str(" |");
        }
        out.push_str("\n|");
        out.push_str(&"---|".repeat(columns.len()));
        out.push('\n');
        Table { out }
    }

    /// One row: `| c1 | c2 |`.
    pub fn row(&mut self, cells: &[&dyn Display]) {
        self.row_of(cells);
    }

    /// One row from cells of one type (a row built in a loop).
    pub fn row_of<I>(&mut self, cells: I)
    where
        I: IntoIterator,
        I::Item: Display,
    {
        self.out.push('|');
        for c in cells {
            self.out.push_str(&format!(" {c} |"));
        }
        self.out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_is_a_header_a_separator_and_rows() {
        let mut s = String::from("text\n\n");
        let mut t = Table::new(&mut s, &["variant", "ns"]);
        t.row(&[&"`none`", &12.5]);
        t.row(&[&"`rampart`", &"n/a"]);
        assert_eq!(s, "text\n\n| variant | ns |\n|---|---|\n| `none` | 12.5 |\n| `rampart` | n/a |\n");
    }
}
