//! A goal an issue sets for a benchmark, and how one run compares: the
//! one type both reports (`bench seeds`: crate::report; `bench enforce`:
//! crate::enforce::report) list their targets with.

/// How a goal's figure reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// A ratio, printed `1.23x`.
    Ratio,
    /// An overhead in percent, printed `+1.23%`.
    Percent,
}

/// One goal and this run's figure for it.
#[derive(Clone, Debug, PartialEq)]
pub struct Goal {
    pub name: String,
    /// The figure measured, if it could be.
    pub measured: Option<f64>,
    /// The bound (NaN when it is itself a figure of the run that could
    /// not be measured).
    pub limit: f64,
    /// true: the figure must be at most the limit; false: at least.
    pub at_most: bool,
    pub unit: Unit,
    /// Why it could not be measured.
    pub missing: Option<String>,
}

impl Goal {
    /// A goal the figure must stay at or below.
    pub fn at_most(name: impl Into<String>, measured: Option<f64>, limit: f64, unit: Unit) -> Goal {
        Goal { name: name.into(), measured, limit, at_most: true, unit, missing: None }
    }

    pub fn holds(&self) -> Option<bool> {
        self.measured.map(|m| if self.at_most { m <= self.limit } else { m >= self.limit })
    }

    pub fn verdict(&self) -> &'static str {
        match self.holds() {
            Some(true) => "PASS",
            Some(false) => "FAIL",
            None => "not measured",
        }
    }

    /// `v` as this goal's unit reads.
    pub fn format(&self, v: f64) -> String {
        match self.unit {
            Unit::Ratio => format!("{v:.2}x"),
            Unit::Percent => format!("{v:+.2}%"),
        }
    }

    /// The measured figure, or `n/a`.
    pub fn measured_text(&self) -> String {
        self.measured.map_or("n/a".to_owned(), |v| self.format(v))
    }

    /// `<= 1.30x`, `>= 2.50x`, `<= 5.00%`; `n/a` for a limit not measured.
    pub fn limit_text(&self) -> String {
        let op = if self.at_most { "<=" } else { ">=" };
        if self.limit.is_nan() {
            return format!("{op} n/a");
        }
        match self.unit {
            Unit::Ratio => format!("{op} {:.2}x", self.limit),
            Unit::Percent => format!("{op} {:.2}%", self.limit),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_goal_reads_in_its_unit() {
        let g = Goal::at_most("x", Some(1.2), 1.3, Unit::Ratio);
        assert_eq!((g.holds(), g.verdict(), g.limit_text()), (Some(true), "PASS", "<= 1.30x".to_string()));
        let p = Goal { at_most: false, ..Goal::at_most("y", Some(-0.5), 2.0, Unit::Percent) };
        assert_eq!((p.holds(), p.measured_text(), p.limit_text()), (Some(false), "-0.50%".into(), ">= 2.00%".into()));
        let n = Goal::at_most("z", None, f64::NAN, Unit::Ratio);
        assert_eq!((n.holds(), n.measured_text(), n.limit_text()), (None, "n/a".into(), "<= n/a".into()));
    }
}
