//! How soon a waiter reads its place in line again where nothing wakes it: on SQLite, for
//! MySQL waiters beyond the connections their service parks (see `db::mysql::sleepers`), and
//! for semaphores and read-write locks on both. A release there tells nobody, so the next in
//! line has to notice by itself, and the others only need to keep up with the line. A mutex's
//! line is its waiter entries; a semaphore's or read-write lock's is the queue in its claim row.
//!
//! A waiter waits one step per entry ahead of it beyond the first, so while the line moves
//! every waiter reads about once per handoff before its turn. The first and the second in line
//! read again at once a few times (a read costs one round trip, and a short hold ends within a
//! few), then every step. Each read that finds the line where it was doubles the wait (a long
//! hold costs a few reads, not one per step), the first in line's up to 64 steps so that it
//! notices the end of a long hold soon; a move starts again. A waiter of this service is also
//! woken at once by a release made here.

use std::time::Duration;

/// The wait per entry ahead beyond the first while the line moves, and the first and second
/// in line's once their immediate reads are spent.
const STEP: Duration = Duration::from_millis(1);

/// How many reads in a row the first and the second in line send without waiting.
const IMMEDIATE: u32 = 4;

/// How many times the first in line's wait doubles while the line stands still: it reads at
/// least every 64 steps, so the end of a long hold is noticed within that.
const HEAD_DOUBLINGS: u32 = 6;

/// How many times the others' waits double while the line stands still: up to 512 steps per
/// place (the engine's backoff, 500 ms by default, bounds them too).
const MAX_DOUBLINGS: u32 = 9;

/// The longest wait between reads, however far back in line.
const MAX_WAIT: Duration = Duration::from_secs(1);

/// One waiting acquisition's pace.
#[derive(Debug, Default)]
pub(crate) struct Pace {
    /// The place seen by the last read, if any.
    last_ahead: Option<u64>,
    /// Reads in a row that found the same place, counted up to [`IMMEDIATE`] plus
    /// [`MAX_DOUBLINGS`].
    still: u32,
}

impl Pace {
    /// The wait before the next read, after a read found `ahead` live entries before this one.
    pub(crate) fn next(&mut self, ahead: u64) -> Duration {
        if self.last_ahead == Some(ahead) {
            self.still = (self.still + 1).min(IMMEDIATE + MAX_DOUBLINGS);
        } else {
            self.still = 0;
        }
        self.last_ahead = Some(ahead);
        // The first and the second in line read alike while the line moves: the second is
        // next once the first's grant removes its entry, which a short hold follows closely.
        let (steps, doublings) = match ahead.saturating_sub(1) {
            0 if self.still < IMMEDIATE => return Duration::ZERO,
            0 if ahead == 0 => (1, (self.still - IMMEDIATE).min(HEAD_DOUBLINGS)),
            0 => (1, self.still - IMMEDIATE),
            behind => (behind, self.still.min(MAX_DOUBLINGS)),
        };
        let steps = steps.saturating_mul(1 << doublings);
        u32::try_from(steps).map_or(MAX_WAIT, |steps| STEP.saturating_mul(steps).min(MAX_WAIT))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wait_grows_with_the_place_in_line() {
        assert_eq!(Pace::default().next(0), Duration::ZERO);
        assert_eq!(Pace::default().next(1), Duration::ZERO);
        assert_eq!(Pace::default().next(4), STEP * 3);
        assert_eq!(Pace::default().next(u64::MAX), MAX_WAIT);
    }

    /// The waits of `reads` reads in a row finding `ahead` entries before this one, in steps.
    fn waits(ahead: u64, reads: usize) -> Vec<u32> {
        let mut pace = Pace::default();
        let waits = (0..reads).map(|_| pace.next(ahead).as_millis());
        waits
            .map(|ms| u32::try_from(ms).unwrap_or(u32::MAX))
            .collect()
    }

    #[test]
    fn a_line_that_stands_still_is_read_less_often_until_it_moves() {
        let expected = [2, 4, 8, 16, 32, 64, 128, 256, 512, 1000, 1000];
        assert_eq!(waits(3, 11), expected);
        let mut pace = Pace::default();
        for _ in 0..5 {
            pace.next(3);
        }
        assert_eq!(pace.next(2), STEP, "a move starts again from one step");
    }

    #[test]
    fn the_first_in_line_reads_at_once_a_few_times_then_backs_off_less() {
        let head = [0, 0, 0, 0, 1, 2, 4, 8, 16, 32, 64, 64, 64, 64, 64];
        assert_eq!(waits(0, 15), head);
        let second = [0, 0, 0, 0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 512];
        assert_eq!(waits(1, 15), second);
    }
}
