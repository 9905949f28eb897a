//! The MySQL/MariaDB handoff floor on a real MariaDB: a waiting client parks a connection in
//! `GET_LOCK`, and the holder's release ends that wait through the server (`KILL QUERY`), well
//! before the park's second would run out.

use std::sync::Arc;
use std::time::{Duration, Instant};

use compare_bench::contend::Contender;
use compare_bench::peers::mysql_kill_floor::KillRelay;
use lock_sql::sqlx::{self, Connection, MySqlConnection};
use lock_testkit::require;
use lock_testkit::servers::MariaDbServer;

/// A grant this long after the release came from the interrupt, not from a park that slept
/// its second out.
const WOKEN_WITHIN: Duration = Duration::from_millis(500);

/// Connections of the server now waiting in `GET_LOCK`, other than this probe's.
async fn parked(probe: &mut MySqlConnection) -> i64 {
    sqlx::query_scalar(
        "SELECT COUNT(*) FROM information_schema.PROCESSLIST \
         WHERE INFO LIKE 'SELECT GET_LOCK(%' AND ID <> CONNECTION_ID()",
    )
    .fetch_one(probe)
    .await
    .expect("read the process list")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_interrupts_the_parked_waiter() {
    let Some(server) = require(MariaDbServer::start()) else {
        return;
    };
    let url = server.url();
    let mut probe = MySqlConnection::connect(&url).await.expect("probe");
    let clients = [
        Arc::new(KillRelay::connect(&url, "kill/floor").await.expect("first")),
        Arc::new(
            KillRelay::connect(&url, "kill/floor")
                .await
                .expect("second"),
        ),
    ];
    let mut held = clients[0].acquire().await.expect("uncontended grant");
    for turn in 1..=6 {
        let waiter = Arc::clone(&clients[turn % 2]);
        let waiting =
            tokio::spawn(async move { waiter.acquire().await.map_err(|e| e.to_string()) });
        for _ in 0..100 {
            if parked(&mut probe).await == 1 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(
            parked(&mut probe).await,
            1,
            "turn {turn}: the waiter never parked"
        );
        assert!(!waiting.is_finished(), "turn {turn}: granted while held");
        let released = Instant::now();
        held.release().await.expect("release");
        let granted = tokio::time::timeout(WOKEN_WITHIN, waiting).await;
        let granted = granted
            .unwrap_or_else(|_| panic!("turn {turn}: no grant {WOKEN_WITHIN:?} after the release"));
        held = granted.expect("waiter task").expect("grant");
        assert!(released.elapsed() < WOKEN_WITHIN, "turn {turn}");
        // The server lists an interrupted statement for a moment after its error went out;
        // a park that went on waiting would stay listed until its second ran out.
        let left = Instant::now();
        while parked(&mut probe).await != 0 {
            assert!(
                left.elapsed() < WOKEN_WITHIN,
                "turn {turn}: a park outlived its grant"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    held.release().await.expect("last release");
}

/// Clients that ask again as soon as they release, as the contention sweep's do, keep handing
/// the relay on: every turn is granted, none sleeps out a park. Fenced, each grant also writes
/// the lock row, and the row ends free.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_asking_back_to_back_take_turns() {
    let Some(server) = require(MariaDbServer::start()) else {
        return;
    };
    let url = server.url();
    for (fenced, count) in [(false, 2), (false, 4), (true, 4)] {
        let name = format!("kill/turns/{fenced}/{count}");
        let mut tasks = Vec::new();
        for _ in 0..count {
            let client = match fenced {
                true => KillRelay::connect_fenced(&url, &name).await,
                false => KillRelay::connect(&url, &name).await,
            };
            let client = client.expect("client");
            tasks.push(tokio::spawn(async move {
                for _ in 0..TURNS {
                    let held = client.acquire().await.map_err(|e| e.to_string())?;
                    held.release().await.map_err(|e| e.to_string())?;
                }
                Ok::<_, String>(())
            }));
        }
        let started = Instant::now();
        for task in tasks {
            let done = tokio::time::timeout(Duration::from_secs(20), task).await;
            done.expect("turns finished").expect("task").expect("turns");
        }
        let took = started.elapsed();
        assert!(
            took < Duration::from_secs(5),
            "{count} clients, fenced {fenced}: {TURNS} turns each took {took:?}"
        );
        if fenced {
            let mut probe = MySqlConnection::connect(&url).await.expect("probe");
            let owner: Option<Vec<u8>> =
                sqlx::query_scalar("SELECT owner FROM peer_fenced_floor WHERE name = ?")
                    .bind(&name)
                    .fetch_one(&mut probe)
                    .await
                    .expect("read the lock row");
            assert_eq!(owner, None, "the row ends free");
        }
    }
}

/// Turns each client of [`clients_asking_back_to_back_take_turns`] takes.
const TURNS: usize = 200;

/// A release that comes while the waiter is still on its way to park (queued in the process,
/// its park not yet running on the server, where `KILL QUERY` would find nothing to end) still
/// wakes it at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_racing_the_park_still_wakes_the_waiter() {
    let Some(server) = require(MariaDbServer::start()) else {
        return;
    };
    let url = server.url();
    let clients = [
        Arc::new(KillRelay::connect(&url, "kill/race").await.expect("first")),
        Arc::new(KillRelay::connect(&url, "kill/race").await.expect("second")),
    ];
    let mut held = clients[0].acquire().await.expect("uncontended grant");
    for turn in 1..=RACES {
        let waiter = Arc::clone(&clients[turn % 2]);
        let waiting =
            tokio::spawn(async move { waiter.acquire().await.map_err(|e| e.to_string()) });
        tokio::task::yield_now().await;
        held.release().await.expect("release");
        let granted = tokio::time::timeout(WOKEN_WITHIN, waiting).await;
        let granted = granted
            .unwrap_or_else(|_| panic!("turn {turn}: no grant {WOKEN_WITHIN:?} after the release"));
        held = granted.expect("waiter task").expect("grant");
    }
    held.release().await.expect("last release");
}

/// Releases [`a_release_racing_the_park_still_wakes_the_waiter`] sends.
const RACES: usize = 40;

/// A waiter that left (its client dropped while it was parked, as the end of a timed run drops
/// every client) is no error for the release that finds it first in line: its connection is
/// gone, and so is the wait to interrupt.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_to_a_waiter_that_left_is_no_error() {
    let Some(server) = require(MariaDbServer::start()) else {
        return;
    };
    let url = server.url();
    let mut probe = MySqlConnection::connect(&url).await.expect("probe");
    let holder = KillRelay::connect(&url, "kill/left").await.expect("holder");
    let waiter = Arc::new(KillRelay::connect(&url, "kill/left").await.expect("waiter"));
    let held = holder.acquire().await.expect("uncontended grant");
    let waiting = tokio::spawn({
        let waiter = Arc::clone(&waiter);
        async move { waiter.acquire().await.map_err(|e| e.to_string()) }
    });
    for _ in 0..100 {
        if parked(&mut probe).await == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(parked(&mut probe).await, 1, "the waiter never parked");
    waiting.abort();
    assert!(
        waiting.await.is_err_and(|e| e.is_cancelled()),
        "not aborted"
    );
    drop(waiter);
    // The server ends the dropped connections' threads once it reads their close.
    let left = Instant::now();
    while parked(&mut probe).await != 0 {
        assert!(
            left.elapsed() < WOKEN_WITHIN,
            "the waiter's park outlived it"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    held.release()
        .await
        .expect("a release to a waiter that left");
}
