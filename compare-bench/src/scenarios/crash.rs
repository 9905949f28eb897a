//! Scenario 5, crash recovery: a `lock-holder` process holding the lock is killed with SIGKILL;
//! how long until a waiter in another process acquires it.

use std::time::{Duration, Instant};

use lock_core::DistributedLockExt;

use crate::BenchResult;
use crate::holder::HolderProcess;
use crate::record::Record;
use crate::scenarios::{Ctx, fresh_name, short_tick_zookeeper};
use crate::stats::Spread;

/// The scenario id.
pub const ID: &str = "crash";

/// One setting: backend, the URL to use, the lease given to the holder, and a label.
struct Setting {
    backend: &'static str,
    url: String,
    lease: Option<Duration>,
    setting: String,
    setting_ms: u64,
}

/// Runs two settings per backend.
///
/// # Cancel safety
///
/// Not cancel safe: dropped mid-way, it may leave keys, rows or nodes of its run on the
/// benchmark's servers; the runner always runs it to completion.
///
/// # Errors
///
/// None of its own: a setting that fails is noted as skipped.
pub async fn run(ctx: &mut Ctx) -> BenchResult<()> {
    let trials = ctx.pick(1, 3);
    let (zk, zk_url) = short_tick_zookeeper(ctx)?;
    let mut settings = Vec::new();
    for ms in [1000u64, 4000] {
        settings.push(Setting {
            backend: "zookeeper",
            url: format!("{zk_url}?session_timeout={ms}ms"),
            lease: None,
            setting: format!("session timeout {ms} ms"),
            setting_ms: ms,
        });
    }
    for backend in ["redis", "postgres", "mysql"] {
        if !ctx.wants(backend) {
            continue;
        }
        for ms in [1000u64, 5000] {
            settings.push(Setting {
                backend,
                url: ctx.servers.url(backend),
                lease: Some(Duration::from_millis(ms)),
                setting: format!("lease {ms} ms"),
                setting_ms: ms,
            });
        }
    }
    for setting in settings {
        match measure(&setting, trials).await {
            Ok(record) => ctx.push(record),
            Err(error) => ctx.skip(format!(
                "{ID}: {} {}: {error}",
                setting.backend, setting.setting
            )),
        }
    }
    drop(zk);
    Ok(())
}

async fn measure(setting: &Setting, trials: usize) -> BenchResult<Record> {
    let mut recoveries = Vec::new();
    for _ in 0..trials {
        let name = fresh_name(ID);
        let waiter = distlock::connect(&setting.url).await?;
        let holder =
            HolderProcess::acquire(&setting.url, &name, setting.lease, Duration::from_secs(30))?;
        let waiting = {
            let (waiter, name) = (waiter.clone(), name.clone());
            tokio::spawn(async move {
                let guard = waiter
                    .acquire_timeout(&name, Duration::from_secs(60))
                    .await?;
                let granted = Instant::now();
                guard.release().await?;
                Ok::<_, lock_core::Error>(granted)
            })
        };
        // The waiter queues behind the live holder first.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let mut holder = holder;
        let killed = Instant::now();
        holder.kill();
        let granted = waiting.await??;
        recoveries.push(granted.saturating_duration_since(killed));
    }
    let spread = Spread::of(recoveries.clone());
    let mut record = Record::new(
        ID,
        &format!("distlock {}", env!("CARGO_PKG_VERSION")),
        setting.backend,
    );
    record.clients = 2;
    record.ops = trials as u64;
    record.seconds = recoveries.iter().map(Duration::as_secs_f64).sum();
    record.p50_us = spread.p50_us;
    record.p99_us = spread.p99_us;
    record.max_us = spread.max_us;
    Ok(record
        .with("setting", setting.setting.clone())
        .with("setting_ms", setting.setting_ms)
        .with("latency_is", "SIGKILL of the holder to the waiter's grant"))
}
