//! What a follower learns of an election: who leads, under which epoch, and whether it missed a
//! leader in between.

/// An election's leader as the store shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Leader {
    /// What the leader published: its campaign value, or what it last
    /// [proclaimed](crate::Leadership::proclaim).
    pub value: String,
    /// The leadership's epoch: its fencing token, above every earlier leader's.
    pub epoch: u64,
    /// How many leaderships this election has granted, this one included: raised by exactly
    /// one per leader, so an observer can count the leaders it did not see. `None` where the
    /// store keeps no such count.
    pub term: Option<u64>,
}

impl Leader {
    /// A leader publishing `value` under `epoch`, its term unknown.
    pub fn new(value: impl Into<String>, epoch: u64) -> Self {
        Self {
            value: value.into(),
            epoch,
            term: None,
        }
    }

    /// The same, as the election's `term`-th leader.
    #[must_use]
    pub fn with_term(mut self, term: u64) -> Self {
        self.term = Some(term);
        self
    }
}

/// One change an observer sees: the new leader (or none), and the leaders it missed before it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct LeaderChange {
    /// The leader now; `None` while nobody leads.
    pub leader: Option<Leader>,
    /// The leaders that came and went since the observer's previous change without being seen.
    pub missed: Missed,
}

/// How many leaders an observer missed between two changes it saw. Counting starts at the
/// first leader it saw: leaders before that are not counted, even if it saw "no leader" first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Missed {
    /// None: the observer saw every leader up to this one.
    Nothing,
    /// Exactly this many, counted by the election's term.
    Exactly(u64),
    /// Some leaders may have been missed and the store cannot say how many (its term counter
    /// went backwards, or it keeps none).
    Unknown,
}

/// What an observer that last saw `before` (and, among leaders with a term, last saw
/// `last_term`) missed on seeing `now`.
pub(crate) fn missed(before: Option<&Leader>, last_term: Option<u64>, now: &Leader) -> Missed {
    if before.is_some_and(|before| before.epoch == now.epoch) {
        return Missed::Nothing; // the same leadership, with a new value
    }
    match (last_term, now.term) {
        (None, _) if before.is_none() => Missed::Nothing,
        (Some(last), Some(term)) if term > last => match term - last - 1 {
            0 => Missed::Nothing,
            gap => Missed::Exactly(gap),
        },
        _ => Missed::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leader(epoch: u64, term: u64) -> Leader {
        Leader::new("a", epoch).with_term(term)
    }

    #[test]
    fn consecutive_terms_miss_nothing_and_a_jump_counts_the_gap() {
        let first = leader(10, 1);
        assert_eq!(missed(None, None, &first), Missed::Nothing);
        assert_eq!(
            missed(Some(&first), Some(1), &leader(20, 2)),
            Missed::Nothing
        );
        assert_eq!(
            missed(Some(&first), Some(1), &leader(40, 4)),
            Missed::Exactly(2)
        );
        // Nobody led in between: the gap is counted from the last leader seen.
        assert_eq!(missed(None, Some(1), &leader(40, 3)), Missed::Exactly(1));
    }

    #[test]
    fn a_new_value_of_the_same_leadership_misses_nothing() {
        let first = leader(10, 1);
        let proclaimed = Leader::new("b", 10).with_term(1);
        assert_eq!(missed(Some(&first), Some(1), &proclaimed), Missed::Nothing);
    }

    #[test]
    fn a_term_that_falls_or_is_absent_is_an_unknown_gap() {
        let first = leader(10, 5);
        assert_eq!(
            missed(Some(&first), Some(5), &leader(20, 2)),
            Missed::Unknown
        );
        assert_eq!(
            missed(Some(&first), Some(5), &Leader::new("b", 20)),
            Missed::Unknown
        );
        let untermed = Leader::new("a", 10);
        assert_eq!(
            missed(Some(&untermed), None, &Leader::new("b", 20)),
            Missed::Unknown
        );
    }
}
