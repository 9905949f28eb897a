//! The conformance suite: every backend's behaviour checked by one set of cases.
//!
//! A backend joins with one line, [`conformance_tests!`](crate::conformance_tests), which expands
//! to one named `#[tokio::test]` per case. Cases a backend cannot support are skipped by its
//! [`Capabilities`](lock_core::Capabilities), never deleted. Each case uses lock names of its
//! own, so cases run in parallel against one shared server.

mod basic;
mod bounded;
mod cancel;
mod config;
mod contention;
mod election;
mod force;
mod inspect;
mod lease;
mod loss;
mod rw_lock;
mod semaphore;
mod support;
mod unreachable;
mod with_lock;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use lock_core::{DistributedLock, LockName, Result};

pub use basic::{
    acquire_release_reacquire, acquire_timeout_returns_timeout_in_time,
    distinct_names_are_independent, invalid_names_are_rejected_before_io,
    odd_names_work_and_stay_distinct, try_acquire_on_held_returns_none,
    waiter_acquires_soon_after_release,
};
pub use bounded::{
    at_risk_fires_before_lost_on_a_stalled_link, max_hold_ends_the_hold_on_schedule,
};
pub use cancel::cancelled_acquires_leave_lock_acquirable;
pub use config::{
    duration_max_waits_forever_and_refuses_as_a_lease, malformed_urls_are_invalid_input_before_io,
};
pub use contention::{contention_16_clients_zero_overlaps, fencing_tokens_strictly_increase};
pub use election::{
    election_changes_are_pushed_to_observers, election_leader_value_proclaim_and_resign,
    election_lost_fires_before_another_leads, election_observers_see_every_change_or_report_it,
    election_one_leader_at_a_time_with_rising_epochs,
};
pub use force::{
    force_release_cancelled_midway_is_all_or_nothing, force_release_frees_only_the_current_token,
};
pub use inspect::{
    inspect_shows_holder_waiters_and_nothing_after_release, list_shows_held_names_under_a_prefix,
};
pub use lease::{an_extend_is_sent_at_once, racing_extends_never_overstate_the_lease};
pub use loss::{
    lease_renewal_keeps_lock_past_lease, lost_signal_fires_when_severed,
    lost_signal_quiet_on_release, release_after_loss_is_not_held_and_spares_new_holder,
};
pub use rw_lock::{
    rw_readers_share_and_writers_exclude, rw_waiting_writer_blocks_new_readers,
    rw_writers_are_not_starved,
};
pub use semaphore::{
    permit_lost_when_its_lease_ends_before_regrant, semaphore_admits_exactly_max_permits,
    semaphore_refuses_zero_and_mismatched_limits, semaphore_release_admits_a_waiter,
    semaphore_tokens_strictly_increase,
};
pub use unreachable::unreachable_server_is_unavailable_in_time;
pub use with_lock::{
    with_lock_lost_mid_closure_drops_it, with_lock_nested_reenters, with_lock_releases_on_error,
    with_lock_releases_on_panic, with_lock_returns_value,
};

/// A backend under test, as the conformance suite drives it.
#[async_trait]
pub trait ConformanceTarget: Send + Sync + 'static {
    /// A new, independent client of the lock service: its own connection or session, as a
    /// separate process would have.
    async fn client(&self) -> Result<Arc<dyn DistributedLock>>;

    /// Ends the current hold on `name` behind its holder's back, as an operator or the server
    /// would: delete the key, row or node, or expire the session.
    async fn sever(&self, name: &LockName) -> Result<()>;

    /// A client pointed at `addr`, where nothing answers, with `timeout` as its connection and
    /// operation timeout. `None` for backends without a server.
    async fn unreachable_client(
        &self,
        addr: SocketAddr,
        timeout: Duration,
    ) -> Option<Result<Arc<dyn DistributedLock>>>;

    /// The server's address (one of them, for an ensemble), for cases that put a
    /// [`FaultProxy`](crate::faults::FaultProxy) in front of it. `None` for backends without a
    /// network server: those cases are skipped.
    fn server_addr(&self) -> Option<SocketAddr> {
        None
    }

    /// A client of this target's server reached at `addr` (a proxy in front of
    /// [`server_addr`](ConformanceTarget::server_addr)) with `timeout` as its connection and
    /// operation timeout (on ZooKeeper, its session timeout too). By default, the
    /// [`unreachable_client`](ConformanceTarget::unreachable_client) for `addr`.
    async fn client_at(
        &self,
        addr: SocketAddr,
        timeout: Duration,
    ) -> Option<Result<Arc<dyn DistributedLock>>> {
        self.unreachable_client(addr, timeout).await
    }

    /// A URL a new client of this target connects with (`None`: the URL cases are skipped).
    fn url(&self) -> Option<String> {
        None
    }

    /// Connects a client by URL, the way this backend's builder does.
    ///
    /// # Errors
    ///
    /// As the backend's builder: `InvalidInput` for a bad URL before any I/O.
    async fn connect_url(&self, url: &str) -> Result<Arc<dyn DistributedLock>> {
        let _ = url;
        Err(lock_core::Error::new(
            lock_core::ErrorKind::Unsupported,
            "this target connects by URL only through url()",
        ))
    }

    /// How long the server keeps `name`'s current hold if nobody renews it, as the server
    /// counts; called only while the case holds `name` (`None`: the lease arithmetic case is
    /// skipped).
    async fn lease_left(&self, name: &LockName) -> Option<Duration> {
        let _ = name;
        None
    }
}

/// Expands to one `#[tokio::test]` per conformance case for the target that `$target` (an
/// expression evaluating to a future of `Option<Arc<dyn ConformanceTarget>>`; `None` skips)
/// produces. The calling crate needs `tokio` with `macros` and `rt-multi-thread`.
///
/// ```ignore
/// lock_testkit::conformance_tests!(my_backend_target());
/// ```
#[macro_export]
macro_rules! conformance_tests {
    ($target:expr) => {
        $crate::conformance_tests!(@cases $target;
            acquire_release_reacquire,
            try_acquire_on_held_returns_none,
            distinct_names_are_independent,
            odd_names_work_and_stay_distinct,
            invalid_names_are_rejected_before_io,
            acquire_timeout_returns_timeout_in_time,
            waiter_acquires_soon_after_release,
            contention_16_clients_zero_overlaps,
            fencing_tokens_strictly_increase,
            release_after_loss_is_not_held_and_spares_new_holder,
            lost_signal_fires_when_severed,
            lost_signal_quiet_on_release,
            lease_renewal_keeps_lock_past_lease,
            cancelled_acquires_leave_lock_acquirable,
            with_lock_returns_value,
            with_lock_releases_on_error,
            with_lock_releases_on_panic,
            with_lock_lost_mid_closure_drops_it,
            with_lock_nested_reenters,
            unreachable_server_is_unavailable_in_time,
            duration_max_waits_forever_and_refuses_as_a_lease,
            malformed_urls_are_invalid_input_before_io,
            racing_extends_never_overstate_the_lease,
            an_extend_is_sent_at_once,
            inspect_shows_holder_waiters_and_nothing_after_release,
            list_shows_held_names_under_a_prefix,
            force_release_frees_only_the_current_token,
            force_release_cancelled_midway_is_all_or_nothing,
            max_hold_ends_the_hold_on_schedule,
            at_risk_fires_before_lost_on_a_stalled_link,
            semaphore_admits_exactly_max_permits,
            semaphore_tokens_strictly_increase,
            semaphore_refuses_zero_and_mismatched_limits,
            semaphore_release_admits_a_waiter,
            permit_lost_when_its_lease_ends_before_regrant,
            rw_readers_share_and_writers_exclude,
            rw_waiting_writer_blocks_new_readers,
            rw_writers_are_not_starved,
            election_one_leader_at_a_time_with_rising_epochs,
            election_leader_value_proclaim_and_resign,
            election_observers_see_every_change_or_report_it,
            election_lost_fires_before_another_leads,
            election_changes_are_pushed_to_observers,
        );
    };
    (@cases $target:expr; $($case:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn $case() {
                let target: ::std::option::Option<::std::sync::Arc<dyn $crate::ConformanceTarget>> = $target.await;
                if let ::std::option::Option::Some(target) = target {
                    $crate::conformance::$case(target).await;
                }
            }
        )*
    };
}
