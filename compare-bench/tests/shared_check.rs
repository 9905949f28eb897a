//! The shared-hold driver's occupancy check fails on a semaphore that admits one holder too
//! many and on a read-write lock that lets a writer share, and passes on distlock's memory
//! backend.

use std::sync::Arc;
use std::time::Duration;

use compare_bench::contend::Contender;
use compare_bench::scenarios::shared::{ClaimContender, PERMITS, permit_limit, shared_holds};
use lock_core::{DistributedLock, LockName};
use lock_lab::claimants::ClaimMix;
use lock_testkit::broken::{Breakage, BrokenLock};

const CLIENTS: usize = 16;
const RUN: Duration = Duration::from_millis(500);
const MIXES: [ClaimMix; 2] = [
    ClaimMix::Permits(PERMITS),
    ClaimMix::ReadWrite { write_percent: 10 },
];

fn clients(lock: impl Fn() -> Arc<dyn DistributedLock>, mix: ClaimMix) -> Vec<Arc<dyn Contender>> {
    let name = LockName::new(format!("shared-check/{}", mix.spec())).expect("name");
    (0..CLIENTS)
        .map(|_| Arc::new(ClaimContender::new(lock(), &name, mix)) as Arc<dyn Contender>)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broken_semaphores_and_read_write_locks_show_violations() {
    let breakages = [
        Breakage::SemaphoreAdmitsOneMore,
        Breakage::WriterSharesWithReaders,
    ];
    for (breakage, mix) in breakages.into_iter().zip(MIXES) {
        let broken = BrokenLock::new(breakage);
        let opened = clients(|| Arc::new(broken.clone()), mix);
        let outcome = shared_holds(opened, permit_limit(mix), RUN)
            .await
            .expect("run");
        assert!(
            outcome.overlaps > 0,
            "{breakage:?} under {} showed no violation in {} holds",
            mix.spec(),
            outcome.samples.len()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_semaphores_and_read_write_locks_show_none() {
    let memory = distlock::connect("memory://shared-check")
        .await
        .expect("memory");
    for mix in MIXES {
        let opened = clients(|| Arc::clone(&memory), mix);
        let outcome = shared_holds(opened, permit_limit(mix), RUN)
            .await
            .expect("run");
        assert_eq!(outcome.overlaps, 0, "violations under {}", mix.spec());
        assert!(
            outcome.samples.len() > 100,
            "only {} holds",
            outcome.samples.len()
        );
    }
}
