//! The suite must fail on locks that break its rules: a checker that cannot fail proves nothing.

use std::future::Future;
use std::sync::Arc;

use lock_testkit::broken::Breakage;
use lock_testkit::conformance::{
    an_extend_is_sent_at_once, contention_16_clients_zero_overlaps,
    election_changes_are_pushed_to_observers, election_leader_value_proclaim_and_resign,
    election_observers_see_every_change_or_report_it,
    election_one_leader_at_a_time_with_rising_epochs, fencing_tokens_strictly_increase,
    force_release_frees_only_the_current_token,
    inspect_shows_holder_waiters_and_nothing_after_release, lost_signal_fires_when_severed,
    malformed_urls_are_invalid_input_before_io, max_hold_ends_the_hold_on_schedule,
    racing_extends_never_overstate_the_lease, release_after_loss_is_not_held_and_spares_new_holder,
    rw_readers_share_and_writers_exclude, rw_waiting_writer_blocks_new_readers,
    rw_writers_are_not_starved, semaphore_admits_exactly_max_permits,
    semaphore_release_admits_a_waiter, try_acquire_on_held_returns_none,
    with_lock_lost_mid_closure_drops_it,
};
use lock_testkit::{BrokenTarget, ConformanceTarget};

fn broken(breakage: Breakage) -> Arc<dyn ConformanceTarget> {
    Arc::new(BrokenTarget::new(breakage))
}

/// Runs a case in its own task and asserts that it failed (panicked).
async fn assert_fails(case: &str, run: impl Future<Output = ()> + Send + 'static) {
    let outcome = tokio::spawn(run).await;
    assert!(
        outcome.is_err_and(|error| error.is_panic()),
        "{case} passed on a broken lock"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn overlap_detector_catches_a_lock_without_mutual_exclusion() {
    let target = broken(Breakage::NoMutualExclusion);
    assert_fails(
        "contention",
        contention_16_clients_zero_overlaps(Arc::clone(&target)),
    )
    .await;
    assert_fails("try_acquire", try_acquire_on_held_returns_none(target)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fencing_cases_catch_repeating_tokens() {
    let target = broken(Breakage::RepeatingFencingTokens);
    assert_fails(
        "fencing",
        fencing_tokens_strictly_increase(Arc::clone(&target)),
    )
    .await;
    assert_fails(
        "contention fencing order",
        contention_16_clients_zero_overlaps(target),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn lost_signal_cases_catch_a_silent_lock() {
    let target = broken(Breakage::NoLostSignal);
    assert_fails(
        "lost signal",
        lost_signal_fires_when_severed(Arc::clone(&target)),
    )
    .await;
    assert_fails(
        "release after loss",
        release_after_loss_is_not_held_and_spares_new_holder(Arc::clone(&target)),
    )
    .await;
    assert_fails(
        "with_lock loss",
        with_lock_lost_mid_closure_drops_it(target),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn lease_case_catches_a_guard_that_counts_on_more_than_the_server_keeps() {
    let target = broken(Breakage::OverstatedLease);
    assert_fails(
        "racing extends",
        racing_extends_never_overstate_the_lease(target),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn lease_case_catches_an_extend_that_waits_for_a_batch() {
    let target = broken(Breakage::ExtendWaitsForABatch);
    assert_fails("extend at once", an_extend_is_sent_at_once(target)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn url_case_catches_a_backend_that_accepts_unknown_parameters() {
    let target = broken(Breakage::LaxUrls);
    assert_fails(
        "malformed URLs",
        malformed_urls_are_invalid_input_before_io(target),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn operator_cases_catch_a_token_blind_force_release_and_uncounted_waiters() {
    assert_fails(
        "force_release",
        force_release_frees_only_the_current_token(broken(Breakage::ForceReleaseIgnoresToken)),
    )
    .await;
    assert_fails(
        "inspect waiters",
        inspect_shows_holder_waiters_and_nothing_after_release(broken(Breakage::NoWaiterCount)),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn max_hold_case_catches_a_lock_that_renews_for_ever() {
    assert_fails(
        "max_hold",
        max_hold_ends_the_hold_on_schedule(broken(Breakage::NoMaxHold)),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn semaphore_cases_catch_one_permit_too_many() {
    let target = broken(Breakage::SemaphoreAdmitsOneMore);
    assert_fails(
        "semaphore occupancy",
        semaphore_admits_exactly_max_permits(Arc::clone(&target)),
    )
    .await;
    assert_fails("semaphore full", semaphore_release_admits_a_waiter(target)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn rw_cases_catch_a_writer_beside_readers() {
    let target = broken(Breakage::WriterSharesWithReaders);
    assert_fails(
        "rw occupancy",
        rw_readers_share_and_writers_exclude(Arc::clone(&target)),
    )
    .await;
    assert_fails(
        "rw waiting writer",
        rw_waiting_writer_blocks_new_readers(target),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn rw_cases_catch_writers_starved_by_readers() {
    let target = broken(Breakage::StarvesWriters);
    assert_fails(
        "rw starvation",
        rw_writers_are_not_starved(Arc::clone(&target)),
    )
    .await;
    assert_fails(
        "rw waiting writer",
        rw_waiting_writer_blocks_new_readers(target),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn election_cases_catch_two_leaders() {
    let target = broken(Breakage::TwoLeaders);
    assert_fails(
        "election occupancy",
        election_one_leader_at_a_time_with_rising_epochs(Arc::clone(&target)),
    )
    .await;
    assert_fails(
        "election rival",
        election_leader_value_proclaim_and_resign(target),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn election_cases_catch_epochs_that_do_not_rise() {
    let target = broken(Breakage::RepeatingFencingTokens);
    assert_fails(
        "election epochs",
        election_one_leader_at_a_time_with_rising_epochs(target),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn election_observer_case_catches_hidden_gaps() {
    let target = broken(Breakage::HiddenGaps);
    assert_fails(
        "election observers",
        election_observers_see_every_change_or_report_it(target),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn election_push_case_catches_observers_left_to_poll() {
    let target = broken(Breakage::UnpushedChanges);
    assert_fails(
        "election pushes",
        election_changes_are_pushed_to_observers(target),
    )
    .await;
}
