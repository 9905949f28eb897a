//! How a [`BrokenLock`](super::BrokenLock) breaks elections.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use futures_util::StreamExt;
use lock_core::{
    AcquireOptions, DistributedLock, Leader, LeaderTicks, LockGuard, LockName, Result,
};

use super::{Breakage, BrokenLock, REPEATED_TOKEN};

/// Terms made up per epoch in the order epochs are first read, so they look consecutive
/// whatever was missed.
#[derive(Debug, Default)]
pub(super) struct MadeUpTerms {
    terms: Mutex<HashMap<u64, u64>>,
}

impl MadeUpTerms {
    fn term_of(&self, epoch: u64) -> u64 {
        let mut terms = self.terms.lock().unwrap_or_else(PoisonError::into_inner);
        let next = u64::try_from(terms.len()).map_or(u64::MAX, |count| count + 1);
        *terms.entry(epoch).or_insert(next)
    }
}

/// Campaigns on the memory lock underneath, broken as the lock's breakage says.
pub(super) async fn campaign(
    lock: &BrokenLock,
    name: &LockName,
    options: &AcquireOptions,
) -> Result<Option<LockGuard>> {
    match lock.breakage {
        // The sitting leader is deposed behind its back, before it could hear of it.
        Breakage::TwoLeaders => {
            lock.inner.sever_claims(name);
            lock.inner.campaign_with(name, options).await
        }
        Breakage::RepeatingFencingTokens => {
            let Some(real) = lock.inner.campaign_with(name, options).await? else {
                return Ok(None);
            };
            Ok(Some(lock.wrap(Some(real), REPEATED_TOKEN, name, options)))
        }
        _ => lock.inner.campaign_with(name, options).await,
    }
}

/// The leader underneath, with the epoch or term the breakage makes up.
pub(super) async fn read_leader(lock: &BrokenLock, name: &LockName) -> Result<Option<Leader>> {
    let Some(leader) = lock.inner.read_leader(name).await? else {
        return Ok(None);
    };
    Ok(Some(match lock.breakage {
        Breakage::RepeatingFencingTokens => {
            Leader::new(leader.value, REPEATED_TOKEN).with_term(leader.term.unwrap_or(0))
        }
        Breakage::HiddenGaps => {
            let term = lock.made_up_terms.term_of(leader.epoch);
            Leader::new(leader.value, leader.epoch).with_term(term)
        }
        _ => leader,
    }))
}

/// The pushes underneath; with hidden gaps or unpushed changes, none at all (observers only
/// poll).
pub(super) async fn watch_leader(lock: &BrokenLock, name: &LockName) -> Result<LeaderTicks> {
    if matches!(
        lock.breakage,
        Breakage::HiddenGaps | Breakage::UnpushedChanges
    ) {
        return Ok(futures_util::stream::pending().boxed());
    }
    lock.inner.watch_leader(name).await
}
