//! The election conveniences, written once over every backend's `campaign_with`,
//! `read_leader` and `watch_leader`.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;

use super::leadership::Leadership;
use super::observe::LeaderObserver;
use crate::ext::timeout_error;
use crate::owner_label::validate_owner_label;
use crate::{AcquireOptions, DistributedLock, IntoLockName, Leader, LockName, Result};

/// Leader election for every [`DistributedLock`] whose backend offers
/// [`Capabilities::election`](crate::Capabilities::election).
///
/// Candidates [`campaign`](ElectionExt::campaign) with a value they publish (an address, an
/// id); one leads at a time, the others wait in arrival order. The leader's
/// [`Leadership::epoch`] is a fencing token that rises with every new leader. Followers read
/// [`leader`](ElectionExt::leader) or follow [`observe`](ElectionExt::observe).
///
/// # Examples
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> lock_core::Result<()> {
/// use lock_core::{ElectionExt, MemoryLock};
///
/// let service = MemoryLock::new();
/// let leading = service.campaign("jobs/scheduler", "10.0.0.7:8080").await?;
/// assert!(service.try_campaign("jobs/scheduler", "10.0.0.8:8080").await?.is_none());
/// let leader = service.leader("jobs/scheduler").await?.expect("a leader");
/// assert_eq!((leader.value.as_str(), leader.epoch), ("10.0.0.7:8080", leading.epoch()));
/// leading.resign().await?;
/// # Ok(())
/// # }
/// ```
#[async_trait]
pub trait ElectionExt: DistributedLock {
    /// Waits, without limit, until this candidate leads `name`, publishing `value`.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: a campaign dropped while waiting leaves no candidate behind, and one
    /// dropped as it was granted resigns in the background.
    ///
    /// # Errors
    ///
    /// `InvalidInput` for an invalid name or a value that is no valid owner label (1 to 128
    /// printable bytes), before any I/O; `Unsupported` where the backend has no elections;
    /// otherwise as [`DistributedLock::campaign_with`].
    async fn campaign<N: IntoLockName + Send>(&self, name: N, value: &str) -> Result<Leadership> {
        let options = self.default_options().with_wait(None);
        campaign_or_timeout(self, name, value, options).await
    }

    /// Leads `name` if nobody leads or waits to lead right now; `Ok(None)` otherwise.
    ///
    /// # Cancel safety
    ///
    /// As [`campaign`](ElectionExt::campaign).
    ///
    /// # Errors
    ///
    /// As [`campaign`](ElectionExt::campaign).
    async fn try_campaign<N: IntoLockName + Send>(
        &self,
        name: N,
        value: &str,
    ) -> Result<Option<Leadership>> {
        let options = self.default_options().with_wait(Some(Duration::ZERO));
        campaign(self, name, value, options).await
    }

    /// Waits up to `wait` to lead `name`.
    ///
    /// # Cancel safety
    ///
    /// As [`campaign`](ElectionExt::campaign).
    ///
    /// # Errors
    ///
    /// `Timeout` if another candidate still leads after `wait`; otherwise as
    /// [`campaign`](ElectionExt::campaign).
    async fn campaign_timeout<N: IntoLockName + Send>(
        &self,
        name: N,
        value: &str,
        wait: Duration,
    ) -> Result<Leadership> {
        let options = self.default_options().with_wait(Some(wait));
        campaign_or_timeout(self, name, value, options).await
    }

    /// Campaigns for `name` with `options` (lease, wait, `max_hold`, ...; their owner label
    /// is replaced by `value`), turning a wait that ends without leading into `Timeout`.
    ///
    /// # Cancel safety
    ///
    /// As [`campaign`](ElectionExt::campaign).
    ///
    /// # Errors
    ///
    /// `InvalidInput` for an invalid name, value or options (before any I/O); `Timeout` if
    /// another candidate still leads when `options.wait` ends; otherwise as
    /// [`campaign`](ElectionExt::campaign).
    async fn campaign_timeout_with<N: IntoLockName + Send>(
        &self,
        name: N,
        value: &str,
        options: &AcquireOptions,
    ) -> Result<Leadership> {
        campaign_or_timeout(self, name, value, options.clone()).await
    }

    /// The leader of `name` now, as the store shows it; `None` while nobody leads.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: it only reads.
    ///
    /// # Errors
    ///
    /// `InvalidInput` for an invalid name; otherwise as [`DistributedLock::read_leader`].
    async fn leader<N: IntoLockName + Send>(&self, name: N) -> Result<Option<Leader>> {
        let name = name.into_lock_name()?;
        self.read_leader(&name).await
    }

    /// Follows `name`: the current leader, then every change, pushed by the store. Nothing is
    /// asked of the store until the first [`next_change`](LeaderObserver::next_change).
    ///
    /// # Errors
    ///
    /// `InvalidInput` for an invalid name.
    fn observe<N: IntoLockName>(&self, name: N) -> Result<LeaderObserver<'_, Self>> {
        Ok(LeaderObserver::new(self, name.into_lock_name()?))
    }
}

impl<L: DistributedLock + ?Sized> ElectionExt for L {}

/// Campaigns with `options`, publishing `value`; `Ok(None)` when the wait ended first.
async fn campaign<L, N>(
    lock: &L,
    name: N,
    value: &str,
    options: AcquireOptions,
) -> Result<Option<Leadership>>
where
    L: DistributedLock + ?Sized,
    N: IntoLockName,
{
    let (name, options) = checked(name, value, options)?;
    let guard = lock.campaign_with(&name, &options).await?;
    Ok(guard.map(|guard| Leadership::new(guard, value.to_owned())))
}

/// As [`campaign`], with a wait that ends first as `Timeout`.
async fn campaign_or_timeout<L, N>(
    lock: &L,
    name: N,
    value: &str,
    options: AcquireOptions,
) -> Result<Leadership>
where
    L: DistributedLock + ?Sized,
    N: IntoLockName,
{
    let (name, options) = checked(name, value, options)?;
    match lock.campaign_with(&name, &options).await? {
        Some(guard) => Ok(Leadership::new(guard, value.to_owned())),
        None => Err(timeout_error(lock.backend(), &name, &options)),
    }
}

/// The name and the options with `value` as the owner label, checked before any I/O.
fn checked<N: IntoLockName>(
    name: N,
    value: &str,
    mut options: AcquireOptions,
) -> Result<(LockName, AcquireOptions)> {
    let name = name.into_lock_name()?;
    validate_owner_label(value)?;
    options.owner_label = Arc::from(value);
    options.validate()?;
    Ok((name, options))
}
