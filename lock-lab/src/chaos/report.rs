//! Per-cell sums of trial outcomes, as a markdown table and JSON lines.

use std::fmt::Write as _;

use super::trial::TrialOutcome;
use super::{Backend, Scenario};

/// One scenario x backend cell.
#[derive(Debug, Clone)]
pub struct CellSummary {
    /// The scenario.
    pub scenario: Scenario,
    /// The backend.
    pub backend: Backend,
    /// Every trial that ran.
    pub outcomes: Vec<TrialOutcome>,
    /// Trials that could not run, with why.
    pub errors: Vec<String>,
}

impl CellSummary {
    pub(crate) fn new(
        scenario: Scenario,
        backend: Backend,
        outcomes: Vec<TrialOutcome>,
        errors: Vec<String>,
    ) -> Self {
        Self {
            scenario,
            backend,
            outcomes,
            errors,
        }
    }

    /// Sums `field` over the trials.
    pub fn sum(&self, field: impl Fn(&TrialOutcome) -> usize) -> usize {
        self.outcomes.iter().map(field).sum()
    }

    /// Trials where `predicate` held.
    pub fn count(&self, predicate: impl Fn(&TrialOutcome) -> bool) -> usize {
        self.outcomes.iter().filter(|o| predicate(o)).count()
    }

    /// The median and maximum of a per-trial measurement, over the trials that have it.
    pub fn p50_max(&self, field: impl Fn(&TrialOutcome) -> Option<f64>) -> Option<(f64, f64)> {
        let mut values: Vec<f64> = self.outcomes.iter().filter_map(field).collect();
        values.sort_by(f64::total_cmp);
        let max = *values.last()?;
        Some((values[(values.len() - 1) / 2], max))
    }

    /// One JSON object (one line) with every figure of the cell.
    pub fn json(&self) -> String {
        let stat = |v: Option<(f64, f64)>| match v {
            Some((p50, max)) => format!("{{\"p50\":{p50:.1},\"max\":{max:.1}}}"),
            None => "null".to_owned(),
        };
        let errors: Vec<String> = self.errors.iter().map(|e| json_string(e)).collect();
        format!(
            "{{\"scenario\":{},\"backend\":{},\"trials\":{},\"errors\":[{}],\"faults\":{},\
             \"grants\":{},\"overlaps\":{},\"token_order_violations\":{},\
             \"stale_writes_attempted\":{},\"stale_writes_accepted\":{},\
             \"current_holder_writes_rejected\":{},\"lost_signals\":{},\"holds_lost\":{},\
             \"holds_lost_by_killed_holder\":{},\"holds_superseded\":{},\"lost_before_next_grant\":{},\"lost_after_next_grant\":{},\
             \"first_refused\":{},\"second_granted\":{},\"second_refused\":[{}],\"recovery_ms\":{},\"lost_after_resume_ms\":{},\"lost_after_fault_ms\":{},\"writes_after_next_grant\":{}}}",
            json_string(self.scenario.id()),
            json_string(self.backend.id()),
            self.outcomes.len(),
            errors.join(","),
            self.sum(|o| o.faults),
            self.sum(|o| o.verdict.grants),
            self.sum(|o| o.verdict.overlaps),
            self.sum(|o| o.verdict.token_order_violations),
            self.sum(|o| o.verdict.stale_writes_attempted),
            self.sum(|o| o.verdict.stale_writes_accepted),
            self.sum(|o| o.current_holder_rejected),
            self.sum(|o| o.lost_signals),
            self.sum(|o| o.holds_lost),
            self.sum(|o| o.holds_lost_by_killed),
            self.sum(|o| o.verdict.holds_superseded),
            self.sum(|o| o.verdict.lost_before_next_grant),
            self.sum(|o| o.verdict.lost_after_next_grant),
            self.count(|o| o.first_refused.is_some()),
            self.count(|o| o.second_granted),
            self.outcomes
                .iter()
                .filter_map(|o| o.second_refused.as_deref().map(json_string))
                .collect::<Vec<_>>()
                .join(","),
            stat(self.p50_max(|o| o.recovery_ms)),
            stat(self.p50_max(|o| o.lost_after_resume_ms)),
            stat(self.p50_max(|o| o.lost_after_fault_ms)),
            match self
                .outcomes
                .iter()
                .any(|o| o.writes_after_next_grant.is_some())
            {
                true => self
                    .sum(|o| o.writes_after_next_grant.unwrap_or(0))
                    .to_string(),
                false => "null".to_owned(),
            },
        )
    }

    fn row(&self) -> String {
        let stat = |v: Option<(f64, f64)>| match v {
            Some((p50, max)) => format!("{p50:.0} / {max:.0}"),
            None => "-".to_owned(),
        };
        let mut notes = Vec::new();
        if let Some(resume) = self.p50_max(|o| o.lost_after_resume_ms) {
            notes.push(format!(
                "lost signal {:.1} / {:.1} ms after resume (p50 / max)",
                resume.0, resume.1
            ));
        }
        if let Some(lost) = self.p50_max(|o| o.lost_after_fault_ms) {
            let fired = self.count(|o| o.lost_after_fault_ms.is_some());
            notes.push(format!(
                "A's lost signal {:.0} / {:.0} ms after the fault (p50 / max, {fired} of {})",
                lost.0,
                lost.1,
                self.outcomes.len()
            ));
        }
        if self
            .outcomes
            .iter()
            .any(|o| o.writes_after_next_grant.is_some())
        {
            notes.push(format!(
                "A's command wrote {} times after B's command started",
                self.sum(|o| o.writes_after_next_grant.unwrap_or(0))
            ));
        }
        let refused = self.count(|o| o.first_refused.is_some());
        if refused > 0 {
            notes.push(format!("A refused {refused}x"));
        }
        let rejected = self.sum(|o| o.current_holder_rejected);
        if rejected > 0 {
            notes.push(format!("{rejected} writes of the newest holder rejected"));
        }
        if let Some(why) = self.outcomes.iter().find_map(|o| o.second_refused.as_ref()) {
            let refused = self.count(|o| o.second_refused.is_some());
            notes.push(format!("B refused {refused}x, e.g. {why}"));
        }
        if !self.errors.is_empty() {
            notes.push(format!(
                "{} trials failed to run: {}",
                self.errors.len(),
                self.errors[0]
            ));
        }
        format!(
            "| {} | {} | {} | {} | {} | {} / {} | {} | {} / {} ({} killed) | {} / {} | {} | {} | {} | {} |",
            self.scenario.id(),
            self.backend.id(),
            self.outcomes.len(),
            self.sum(|o| o.faults),
            self.sum(|o| o.verdict.overlaps),
            self.sum(|o| o.verdict.stale_writes_accepted),
            self.sum(|o| o.verdict.stale_writes_attempted),
            self.sum(|o| o.verdict.token_order_violations),
            self.sum(|o| o.lost_signals),
            self.sum(|o| o.holds_lost),
            self.sum(|o| o.holds_lost_by_killed),
            self.sum(|o| o.verdict.lost_before_next_grant),
            self.sum(|o| o.verdict.lost_after_next_grant),
            self.sum(|o| o.verdict.holds_superseded),
            self.count(|o| o.second_granted),
            stat(self.p50_max(|o| o.recovery_ms)),
            notes.join("; "),
        )
    }
}

/// The markdown table of `cells`.
pub fn markdown_table(cells: &[CellSummary]) -> String {
    let mut table = String::from(
        "| scenario | backend | trials | faults | real-time overlaps | stale writes accepted / attempted (fenced) | token order violations | lost signals / holds lost (by killed holder) | lost signal before / after next grant | holds superseded while believed | B granted | recovery ms p50 / max | notes |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for cell in cells {
        let _ = writeln!(table, "{}", cell.row());
    }
    table
}

fn json_string(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
