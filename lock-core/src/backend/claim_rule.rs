//! The grant rule of semaphores and read-write locks, for backends that decide grants in Rust
//! (memory, SQL); Redis runs the same rule in its claim script. One rule everywhere, so a
//! claim waits or is granted the same way on every backend.

use crate::{Claim, Result};

/// What the rule says about one acquisition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClaimVerdict<T> {
    /// Grant it now.
    Grant,
    /// Wait; a blocking holder's lease ends by this time at the latest (`None`: only waiters
    /// ahead block).
    Wait(Option<T>),
}

/// The grant rule for `claim`, given the live holders' claims and lease ends (`holders`) and
/// the claims of the waiters queued ahead of it (`ahead`; every waiter, for an acquisition
/// not queued yet): a permit needs fewer waiters ahead than free permits; a read needs no
/// writer holding or waiting ahead (a waiting writer holds back later readers, so writers are
/// never starved); a write needs nobody holding and nobody ahead.
///
/// # Errors
///
/// [`ErrorKind::InvalidInput`](crate::ErrorKind::InvalidInput) for a permit whose limit is not
/// the holders'.
pub fn claim_verdict<T, H, A>(holders: H, ahead: A, claim: Claim) -> Result<ClaimVerdict<T>>
where
    T: Ord + Copy,
    H: Iterator<Item = (Claim, T)> + Clone,
    A: Iterator<Item = Claim>,
{
    let blocking_end = |blocks: &dyn Fn(Claim) -> bool| {
        holders
            .clone()
            .filter(|(held, _)| blocks(*held))
            .map(|(_, lease_end)| lease_end)
            .min()
    };
    let grant = match claim {
        Claim::Permit { max_permits } => {
            let mut held = holders.clone().map(|(held, _)| held);
            if let Some(Claim::Permit {
                max_permits: theirs,
            }) = held.next()
                && theirs != max_permits
            {
                return Err(Claim::mismatched_permits(max_permits, theirs));
            }
            let free = (max_permits as usize).saturating_sub(holders.clone().count());
            ahead.count() < free
        }
        Claim::Read => {
            let writer = holders.clone().any(|(held, _)| held == Claim::Write);
            !writer && !ahead.into_iter().any(|queued| queued == Claim::Write)
        }
        Claim::Write => holders.clone().next().is_none() && ahead.count() == 0,
    };
    if grant {
        return Ok(ClaimVerdict::Grant);
    }
    Ok(ClaimVerdict::Wait(match claim {
        Claim::Read => blocking_end(&|held| held == Claim::Write),
        _ => blocking_end(&|_| true),
    }))
}
