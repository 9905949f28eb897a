//! Occupancy from hold intervals recorded apart (by other processes, other languages): each
//! holder notes when it entered and left, on the machine's wall clock, from inside its hold;
//! the merged intervals show how many held at once. An interval taken inside the hold lies
//! within it, so a count from intervals never exceeds the true one by the recording alone.

use std::time::{SystemTime, UNIX_EPOCH};

/// One hold: wall-clock microseconds at entry and exit, and whether it was exclusive (a write
/// hold or a mutex) or shared (a permit, a read hold).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HoldInterval {
    /// When the holder noted it was inside.
    pub start_micros: u64,
    /// When the holder noted it was leaving (before its release).
    pub end_micros: u64,
    /// Whether nobody else may hold beside it.
    pub exclusive: bool,
}

/// Microseconds since the Unix epoch now: the clock hold intervals are recorded on.
pub fn wall_micros() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| {
            u64::try_from(since.as_micros()).unwrap_or(u64::MAX)
        })
}

/// What the merged intervals show.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IntervalOccupancy {
    /// The most holders at any instant.
    pub max_holders: usize,
    /// The most shared holders at any instant.
    pub max_shared: usize,
    /// Instants at which an exclusive holder had company (counted once per entry that made it).
    pub exclusive_overlaps: usize,
}

/// Sweeps `intervals`: at an instant where one hold ends and another starts, the end counts
/// first (touching intervals do not overlap).
pub fn occupancy(intervals: &[HoldInterval]) -> IntervalOccupancy {
    // (time, 0 = leave / 1 = enter, exclusive)
    let mut events: Vec<(u64, u8, bool)> = intervals
        .iter()
        .flat_map(|hold| {
            [
                (hold.start_micros, 1, hold.exclusive),
                (hold.end_micros, 0, hold.exclusive),
            ]
        })
        .collect();
    events.sort_unstable();
    let (mut shared, mut exclusive) = (0_usize, 0_usize);
    let mut seen = IntervalOccupancy::default();
    for (_, kind, is_exclusive) in events {
        let count = if is_exclusive {
            &mut exclusive
        } else {
            &mut shared
        };
        if kind == 0 {
            *count = count.saturating_sub(1);
            continue;
        }
        *count += 1;
        if exclusive > 0 && shared + exclusive > 1 {
            seen.exclusive_overlaps += 1;
        }
        seen.max_holders = seen.max_holders.max(shared + exclusive);
        seen.max_shared = seen.max_shared.max(shared);
    }
    seen
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hold(start_micros: u64, end_micros: u64, exclusive: bool) -> HoldInterval {
        HoldInterval {
            start_micros,
            end_micros,
            exclusive,
        }
    }

    #[test]
    fn counts_the_most_holders_at_once_and_touching_holds_do_not_overlap() {
        let seen = occupancy(&[
            hold(0, 10, false),
            hold(5, 15, false),
            hold(8, 12, false),
            hold(15, 20, false),
        ]);
        assert_eq!(seen.max_holders, 3);
        assert_eq!(seen.max_shared, 3);
        assert_eq!(seen.exclusive_overlaps, 0);
    }

    #[test]
    fn an_exclusive_hold_with_company_is_counted_whichever_entered_first() {
        assert_eq!(
            occupancy(&[hold(0, 10, true), hold(5, 6, false)]).exclusive_overlaps,
            1
        );
        assert_eq!(
            occupancy(&[hold(0, 10, false), hold(5, 6, true)]).exclusive_overlaps,
            1
        );
        assert_eq!(
            occupancy(&[hold(0, 10, true), hold(10, 20, true)]).exclusive_overlaps,
            0
        );
    }
}
