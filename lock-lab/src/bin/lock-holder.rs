//! A lock client in its own process, for cross-process tests.
//!
//! - `lock-holder hold URL NAME [LEASE_MS]`: acquires, prints `acquired <fencing token>`, and
//!   holds until killed (crash tests kill it with SIGKILL).
//! - `lock-holder lead URL NAME [LEASE_MS]`: campaigns, prints `leading <epoch>` once it leads
//!   the election NAME (publishing `leader`), and leads until killed.
//! - `lock-holder contend URL NAME ROUNDS MARKER`: acquires and releases `ROUNDS` times; inside
//!   each hold it creates the file `MARKER` exclusively (an existing file means another process
//!   holds the lock too: an overlap) and removes it before releasing. Prints
//!   `tokens <t1> <t2> ...` and then `overlaps <n>`.
//! - `lock-holder work URL NAME LEASE_MS WAIT_MS HOLD_MS FENCE_ADDR CLIENT [CLAIM]`: one holder
//!   of a chaos trial (of the lock, or with CLAIM `permits:N`, `read`, `write` or `elect`), writing to a fenced resource and printing its hold events (see
//!   `lock_lab::work`).
//! - `lock-holder fence-write FENCE_ADDR CLIENT [FOR_MS]`: no lock of its own; writes to the
//!   fenced resource every 20 ms with the token in `LOCK_FENCING_TOKEN` (a command run by
//!   `lockrun`), for `FOR_MS` or until killed.
//! - `lock-holder claims URL NAME MIX TASKS ROUNDS HOLD_MS`: `TASKS` tasks on one service take
//!   `ROUNDS` holds each of `HOLD_MS`, by `MIX` (`permits:N` or `rw:WRITE_PERCENT`), and print
//!   each hold's interval (see `lock_lab::claimants`).
//! - `lock-holder lease URL NAME LEASE_MS`: acquires without renewing, prints `acquired`, and
//!   prints `lost` when its lost signal fires (clock-drift tests run it under a faked clock).

use std::time::Duration;

use distlock::{AcquireOptions, DistributedLock, DistributedLockExt, ElectionExt};

type Failure = Box<dyn std::error::Error>;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Failure> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["hold", url, name] => hold(url, name, None).await,
        ["hold", url, name, lease] => hold(url, name, Some(Duration::from_millis(lease.parse()?))).await,
        ["lead", url, name] => lead(url, name, None).await,
        ["lead", url, name, lease] => lead(url, name, Some(Duration::from_millis(lease.parse()?))).await,
        ["contend", url, name, rounds, marker] => contend(url, name, rounds.parse()?, marker).await,
        ["work", url, name, lease, wait, hold, fence, client, claim @ ..] if claim.len() <= 1 => {
            let holding = match claim.first() {
                Some(spec) => lock_lab::work::parse_holding(spec)?,
                None => lock_lab::work::Holding::Lock,
            };
            let plan = lock_lab::work::WorkPlan {
                url: (*url).to_owned(),
                name: (*name).to_owned(),
                lease: Duration::from_millis(lease.parse()?),
                wait: Duration::from_millis(wait.parse()?),
                hold: Duration::from_millis(hold.parse()?),
                fence: fence.parse()?,
                client: client.parse()?,
                holding,
            };
            let status = lock_lab::work::run(&plan).await?;
            std::process::exit(status)
        }
        ["fence-write", fence, client] => fence_write(fence, client, None).await,
        ["fence-write", fence, client, millis] => fence_write(fence, client, Some(millis)).await,
        ["claims", url, name, mix, tasks, rounds, hold] => {
            let plan = lock_lab::claimants::ClaimPlan {
                url: (*url).to_owned(),
                name: (*name).to_owned(),
                mix: lock_lab::claimants::ClaimMix::parse(mix)?,
                tasks: tasks.parse()?,
                rounds: rounds.parse()?,
                hold: Duration::from_millis(hold.parse()?),
            };
            Ok(lock_lab::claimants::run(plan).await?)
        }
        ["lease", url, name, millis] => lease(url, name, Duration::from_millis(millis.parse()?)).await,
        _ => Err("usage: lock-holder hold URL NAME [LEASE_MS] | lead URL NAME [LEASE_MS] | contend URL NAME ROUNDS MARKER | work URL NAME LEASE_MS WAIT_MS HOLD_MS FENCE_ADDR CLIENT [CLAIM] | fence-write FENCE_ADDR CLIENT [FOR_MS] | claims URL NAME MIX TASKS ROUNDS HOLD_MS | lease URL NAME LEASE_MS".into()),
    }
}

async fn hold(url: &str, name: &str, lease: Option<Duration>) -> Result<(), Failure> {
    let lock = distlock::connect(url).await?;
    let guard = lock.acquire_timeout_with(name, &with_lease(lease)?).await?;
    println!("acquired {}", guard.fencing_token());
    guard.lost().cancelled().await;
    Err("lost the lock".into())
}

async fn lead(url: &str, name: &str, lease: Option<Duration>) -> Result<(), Failure> {
    let lock = distlock::connect(url).await?;
    let options = with_lease(lease)?;
    let leading = lock.campaign_timeout_with(name, "leader", &options).await?;
    println!("leading {}", leading.epoch());
    leading.lost().cancelled().await;
    Err("lost the leadership".into())
}

/// Default options, with `lease` when given.
fn with_lease(lease: Option<Duration>) -> Result<AcquireOptions, Failure> {
    let mut options = AcquireOptions::builder();
    if let Some(lease) = lease {
        options = options.lease(lease);
    }
    Ok(options.build()?)
}

async fn contend(url: &str, name: &str, rounds: usize, marker: &str) -> Result<(), Failure> {
    let lock = distlock::connect(url).await?;
    let (mut tokens, mut overlaps) = (Vec::with_capacity(rounds), 0);
    for _ in 0..rounds {
        overlaps += critical_section(&*lock, name, marker, &mut tokens).await?;
    }
    let tokens: Vec<String> = tokens.iter().map(u64::to_string).collect();
    println!("tokens {}", tokens.join(" "));
    println!("overlaps {overlaps}");
    Ok(())
}

/// One hold: returns 1 if the marker showed another holder inside, else 0.
async fn critical_section(
    lock: &dyn DistributedLock,
    name: &str,
    marker: &str,
    tokens: &mut Vec<u64>,
) -> Result<usize, Failure> {
    let guard = lock.acquire_timeout(name, Duration::from_secs(120)).await?;
    tokens.push(guard.fencing_token());
    let entered = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(marker)
        .is_ok();
    tokio::time::sleep(Duration::from_micros(300)).await;
    if entered {
        std::fs::remove_file(marker)?;
    }
    guard.release().await?;
    Ok(usize::from(!entered))
}

async fn fence_write(fence: &str, client: &str, millis: Option<&str>) -> Result<(), Failure> {
    let token: u64 = std::env::var("LOCK_FENCING_TOKEN")?.parse()?;
    let (client, mut fence) = (
        client.parse()?,
        lock_lab::fence::FenceClient::connect(fence.parse()?).await?,
    );
    let until = match millis {
        Some(millis) => Some(tokio::time::Instant::now() + Duration::from_millis(millis.parse()?)),
        None => None,
    };
    while until.is_none_or(|until| tokio::time::Instant::now() < until) {
        fence.write(client, token).await?;
        tokio::time::sleep(lock_lab::work::WRITE_EVERY).await;
    }
    Ok(())
}

async fn lease(url: &str, name: &str, lease: Duration) -> Result<(), Failure> {
    let lock = distlock::connect(url).await?;
    // The service's defaults (the URL's clock_drift among them), with this lease, unrenewed.
    let options = lock
        .default_options()
        .to_builder()
        .lease(lease)
        .auto_renew(false)
        .build()?;
    let guard = lock.acquire_timeout_with(name, &options).await?;
    println!("acquired {}", guard.fencing_token());
    guard.lost().cancelled().await;
    println!("lost");
    Ok(())
}
