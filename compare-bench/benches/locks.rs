//! Criterion micro-benchmarks per backend: uncontended acquire+release, try_acquire on a held
//! lock, and `with_lock` beside a bare acquire/release (its overhead).
//!
//! Servers are spawned with lock-testkit (or taken from `LOCK_TEST_<BACKEND>_URL`). Measurement
//! times are short so a full `cargo bench -p compare-bench` takes a few minutes.

use std::sync::Arc;
use std::time::Duration;

use compare_bench::scenarios::{BACKENDS, distlock_url};
use compare_bench::servers::Servers;
use criterion::{Criterion, criterion_group, criterion_main};
use lock_core::{DistributedLock, DistributedLockExt};
use tokio::runtime::Runtime;

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime")
}

async fn connect(servers: &Servers, backend: &str) -> Arc<dyn DistributedLock> {
    distlock::connect(&distlock_url(servers, backend))
        .await
        .unwrap_or_else(|error| panic!("connect to {backend}: {error}"))
}

fn benches(c: &mut Criterion) {
    let servers = match Servers::start() {
        Ok(servers) => servers,
        Err(error) => {
            eprintln!("SKIPPED: servers did not start ({error}); run scripts/install-servers");
            return;
        }
    };
    let rt = runtime();
    for backend in BACKENDS {
        let lock = rt.block_on(connect(&servers, backend));
        let other = rt.block_on(connect(&servers, backend));
        let name = format!("criterion/{backend}");

        let mut group = c.benchmark_group(format!("uncontended/{backend}"));
        group.bench_function("acquire_release", |b| {
            b.to_async(&rt).iter(|| async {
                let guard = lock.acquire(name.as_str()).await.expect("acquire");
                guard.release().await.expect("release");
            });
        });
        group.bench_function("with_lock", |b| {
            b.to_async(&rt).iter(|| async {
                lock.with_lock(name.as_str(), || async {})
                    .await
                    .expect("with_lock");
            });
        });
        group.finish();

        let held = rt
            .block_on(lock.acquire(name.as_str()))
            .expect("hold for try_acquire");
        c.bench_function(&format!("try_acquire_held/{backend}"), |b| {
            b.to_async(&rt).iter(|| async {
                let denied = other.try_acquire(name.as_str()).await.expect("try_acquire");
                assert!(denied.is_none(), "try_acquire succeeded on a held lock");
            });
        });
        rt.block_on(held.release()).expect("release the held lock");
    }
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2))
}

criterion_group! {
    name = locks;
    config = config();
    targets = benches
}
criterion_main!(locks);
