//! The MySQL/MariaDB handoff floor: the least a `KILL QUERY` handoff costs, whatever the lock
//! around it. Each client parks a connection of its own in `GET_LOCK` of a user lock that its
//! anchor connection holds, as a distlock service's parked connections wait for its anchor, and
//! has a connection for statements; the queue of waiting clients lives in this process, with no
//! table, lease or fencing. A release with waiters sends one `KILL QUERY` naming the first
//! waiter's parked connection, which ends its wait: the interrupt a distlock release sends its
//! first waiter, without the statements around it. A measured bound, not a lock: its clients
//! share one process, and a grant is noted in the process before the interrupt, so that a
//! waiter that has not parked yet does not park. An interrupt that reaches the connection
//! before its park starts is lost (`KILL QUERY` ends only a running statement): the releaser
//! interrupts again every 5 ms (`RING_AGAIN`) until the waiter took its grant up. That happens
//! only when a waiter queued less than a round trip before the release, so with many clients,
//! whose waiters parked long before their turn, every handoff is one `KILL QUERY`.
//!
//! Fenced ([`KillRelay::connect_fenced`]), each grant also writes the lock row, as any fenced,
//! table-backed lock must (see `mysql_fenced_row`): a handoff is then one `UPDATE` and one
//! `KILL QUERY`, the least server work of a fenced table lock woken this way.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use lock_sql::sqlx::{self, AssertSqlSafe, Connection, MySqlConnection, SqlSafeStr};

use crate::BenchResult;
use crate::contend::{Contender, Held};
use crate::peers::mysql_fenced_row::FencedRow;
use crate::peers::mysql_park::{hold_anchor, parked_connection};
use crate::peers::relay::{Relay, relay};

/// The longest one park waits, as lock-sql's.
const PARK_SECONDS: f64 = 1.0;

/// How long a releaser waits for its waiter to take the grant up before it interrupts the
/// waiter's connection again.
const RING_AGAIN: Duration = Duration::from_millis(5);

/// The most times a releaser interrupts its waiter again: for as long as one park lasts.
const RINGS_AT_MOST: u32 = 200;

/// `ER_QUERY_INTERRUPTED`: a statement ended by `KILL QUERY`.
const INTERRUPTED: u16 = 1317;

/// `ER_NO_SUCH_THREAD`: the connection to interrupt is gone.
const NO_SUCH_THREAD: u16 = 1094;

/// Each client of one relay by id: its parked connection's id, the grant noted for it, and its
/// owner token.
type Bells = Mutex<HashMap<usize, Bell>>;

/// How a release reaches one waiting client.
#[derive(Debug, Clone)]
struct Bell {
    parked_id: u64,
    granted: Arc<AtomicBool>,
    token: [u8; 16],
}

/// The bells of the relay `name`, shared by every client of it in this process.
fn bells(name: &str) -> Arc<Bells> {
    static BELLS: OnceLock<Mutex<HashMap<String, Arc<Bells>>>> = OnceLock::new();
    let all = BELLS.get_or_init(Mutex::default);
    let mut all = all.lock().unwrap_or_else(PoisonError::into_inner);
    Arc::clone(all.entry(name.to_owned()).or_default())
}

/// One client: its id in the relay, its connections, and the grant a release notes for it.
#[derive(Debug)]
pub struct KillRelay {
    relay: Arc<Relay>,
    id: usize,
    bells: Arc<Bells>,
    granted: Arc<AtomicBool>,
    token: [u8; 16],
    /// The lock row each grant writes, when fenced.
    row: Option<FencedRow>,
    statements: Arc<tokio::sync::Mutex<MySqlConnection>>,
    parked: tokio::sync::Mutex<MySqlConnection>,
    anchor: String,
    _anchor_holder: MySqlConnection,
}

impl KillRelay {
    /// Connects one client of the relay `name`: its anchor is held when this returns.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping it closes the connections it was opening.
    ///
    /// # Errors
    ///
    /// A connection's or statement's error, or an anchor found taken.
    pub async fn connect(url: &str, name: &str) -> BenchResult<Self> {
        Self::open(url, name, false).await
    }

    /// Connects one client of the fenced relay `name`, whose grants write the lock row: its
    /// anchor is held and the row is there when this returns.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping it closes the connections it was opening.
    ///
    /// # Errors
    ///
    /// A connection's or statement's error, or an anchor found taken.
    pub async fn connect_fenced(url: &str, name: &str) -> BenchResult<Self> {
        Self::open(url, name, true).await
    }

    async fn open(url: &str, name: &str, fenced: bool) -> BenchResult<Self> {
        let key = format!("mysql:{}:{name}", if fenced { "fenced" } else { "bare" });
        let (relay, bells) = (relay(&key), bells(&key));
        let id = relay.join();
        let (anchor, anchor_holder) = hold_anchor(url, "kill-floor").await?;
        let (parked, parked_id) = parked_connection(url).await?;
        let mut statements = MySqlConnection::connect(url).await?;
        let row = match fenced {
            true => Some(FencedRow::open(&mut statements, name).await?),
            false => None,
        };
        let granted = Arc::new(AtomicBool::new(false));
        let token = rand::random::<[u8; 16]>();
        let bell = Bell {
            parked_id,
            granted: Arc::clone(&granted),
            token,
        };
        bells
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id, bell);
        Ok(Self {
            relay,
            id,
            bells,
            granted,
            token,
            row,
            statements: Arc::new(tokio::sync::Mutex::new(statements)),
            parked: tokio::sync::Mutex::new(parked),
            anchor,
            _anchor_holder: anchor_holder,
        })
    }

    /// Parks until a release interrupts the wait or its second runs out.
    async fn park(&self) -> BenchResult<()> {
        let mut parked = self.parked.lock().await;
        let waited: Result<(Option<i64>,), sqlx::Error> = sqlx::query_as("SELECT GET_LOCK(?, ?)")
            .bind(self.anchor.as_str())
            .bind(PARK_SECONDS)
            .fetch_one(&mut *parked)
            .await;
        match waited {
            Ok((Some(1),)) => Err("a park took the anchor's lock: its connection ended".into()),
            Ok(_) => Ok(()),
            Err(error) if interrupted(&error) => Ok(()),
            Err(error) => Err(error.into()),
        }
    }
}

#[async_trait]
impl Contender for KillRelay {
    async fn acquire(&self) -> BenchResult<Box<dyn Held>> {
        if self.relay.take_or_queue(self.id) {
            if let Some(row) = &self.row {
                row.grant(&mut *self.statements.lock().await, &self.token)
                    .await?;
            }
        } else {
            // The release that passed the relay on wrote the grant before it rang.
            while !self.granted.swap(false, Ordering::AcqRel) {
                self.park().await?;
            }
        }
        Ok(Box::new(Handed {
            relay: Arc::clone(&self.relay),
            bells: Arc::clone(&self.bells),
            token: self.token,
            row: self.row.clone(),
            statements: Arc::clone(&self.statements),
        }))
    }
}

/// The relay, held: a release interrupts the first waiter's park, or frees the relay when
/// none waits; fenced, it first grants the row to that waiter, or frees it.
struct Handed {
    relay: Arc<Relay>,
    bells: Arc<Bells>,
    token: [u8; 16],
    row: Option<FencedRow>,
    statements: Arc<tokio::sync::Mutex<MySqlConnection>>,
}

#[async_trait]
impl Held for Handed {
    async fn release(self: Box<Self>) -> BenchResult<()> {
        let Some(next) = self.relay.pass() else {
            if let Some(row) = &self.row {
                row.free(&mut *self.statements.lock().await, &self.token)
                    .await?;
            }
            return Ok(());
        };
        let bell = self
            .bells
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&next)
            .cloned();
        let Bell {
            parked_id,
            granted,
            token,
        } = bell.ok_or("the next waiter has no bell")?;
        if let Some(row) = &self.row {
            row.grant(&mut *self.statements.lock().await, &token)
                .await?;
        }
        granted.store(true, Ordering::Release);
        ring(&self.statements, parked_id).await?;
        let statements = Arc::clone(&self.statements);
        // A park ends by itself within its second, and its waiter then finds the grant: ringing
        // longer than that wakes nobody.
        tokio::spawn(async move {
            for _ in 0..RINGS_AT_MOST {
                tokio::time::sleep(RING_AGAIN).await;
                if !granted.load(Ordering::Acquire) || ring(&statements, parked_id).await.is_err() {
                    break;
                }
            }
        });
        Ok(())
    }
}

/// Interrupts the statement the connection `parked_id` runs, if any. A connection that is gone
/// (its client was dropped while it waited, as the end of a timed run drops every client) has
/// no wait left to end.
async fn ring(statements: &tokio::sync::Mutex<MySqlConnection>, parked_id: u64) -> BenchResult<()> {
    let kill = sqlx::raw_sql(AssertSqlSafe(format!("KILL QUERY {parked_id}")).into_sql_str());
    match kill.execute(&mut *statements.lock().await).await {
        Err(error) if numbered(&error, NO_SUCH_THREAD) => Ok(()),
        other => other.map(drop).map_err(Into::into),
    }
}

/// A parked statement that a release interrupted.
fn interrupted(error: &sqlx::Error) -> bool {
    numbered(error, INTERRUPTED)
}

/// Whether `error` is the server's error `number`.
fn numbered(error: &sqlx::Error, number: u16) -> bool {
    error
        .as_database_error()
        .and_then(|error| error.try_downcast_ref::<sqlx::mysql::MySqlDatabaseError>())
        .is_some_and(|error| error.number() == number)
}
