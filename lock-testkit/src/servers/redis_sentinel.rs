//! A Redis primary with replicas, watched by sentinels that can fail it over.

use std::time::{Duration, Instant};

use super::poll::poll_until;
use super::redis::RedisServer;
use super::resp::{Reply, call};
use super::sentinel::{SentinelServer, field};
use crate::ServerError;

/// The name the sentinels monitor the primary under.
const MASTER: &str = "distlock";

/// How long the sentinels may take to see the whole set, or to finish a fail-over.
const SETTLE: Duration = Duration::from_secs(30);

/// How much longer a wait for the set to settle goes on when a sentinel tilted since the set
/// last settled: a sentinel whose timer ran over 2 s late (a starved host, a paused process)
/// enters TILT mode and acts on nothing for 30 s, and then reads each server's state within its
/// 10 s period.
const TILT_WAIT: Duration = Duration::from_secs(45);

/// A primary, its replicas and the sentinels that watch them, on reserved loopback ports; all
/// killed on drop. Server indices are stable: index 0 stays the original primary whatever its
/// role now.
#[derive(Debug)]
pub struct RedisSentinel {
    servers: Vec<RedisServer>,
    sentinels: Vec<SentinelServer>,
    /// How many times the sentinels had entered TILT mode when the set last settled.
    tilts_settled: usize,
}

impl RedisSentinel {
    /// Starts a primary, `replicas` replicas in sync with it, and `sentinels` sentinels
    /// monitoring it as `distlock` with a majority quorum, a 1 s down-after period and a 5 s
    /// fail-over timeout, then waits (30 s at most, 45 s more per TILT of a sentinel) until the
    /// set is settled: every replica
    /// reports its link to the primary up, and every sentinel names the primary, knows every
    /// other sentinel, and lists every replica as connected. Every server syncs replicas at
    /// once (`repl-diskless-sync-delay 0`) rather than after the default 5 s.
    ///
    /// # Errors
    ///
    /// [`ServerError::Missing`] when `redis-server` is not installed; [`ServerError::Failed`]
    /// when `sentinels` is 0, a process does not start, or the set does not settle in time.
    pub fn start(replicas: usize, sentinels: usize) -> Result<Self, ServerError> {
        if sentinels == 0 {
            return Err(failed("needs one sentinel or more".to_owned()));
        }
        // Full syncs start at once, not after the default 5 s wait for more replicas: at
        // start-up, and when a fail-over turns the old primary into a replica.
        let quick_sync = ["--repl-diskless-sync-delay".to_owned(), "0".to_owned()];
        let mut servers = vec![RedisServer::start_with(&quick_sync)?];
        for _ in 0..replicas {
            let replica = RedisServer::start_replica_of(&servers[0])?;
            let reply = replica.command("CONFIG SET repl-diskless-sync-delay 0");
            if !reply.as_deref().is_ok_and(|reply| reply.starts_with("+OK")) {
                return Err(failed(format!("CONFIG SET on a replica: {reply:?}")));
            }
            servers.push(replica);
        }
        let primary = servers[0].port();
        let mut set = Self {
            servers,
            sentinels: Vec::with_capacity(sentinels),
            tilts_settled: 0,
        };
        for _ in 0..sentinels {
            let sentinel = SentinelServer::start(MASTER, primary, sentinels / 2 + 1)?;
            set.sentinels.push(sentinel);
        }
        set.settle(|set| set.unsettled(primary))
            .map_err(|reason| set.not_settled("starting", 0, &reason))?;
        Ok(set)
    }

    /// The name the sentinels monitor the primary under: `distlock`.
    pub fn master_name(&self) -> &'static str {
        MASTER
    }

    /// `redis+sentinel://127.0.0.1:S1,127.0.0.1:S2,.../distlock`.
    pub fn url(&self) -> String {
        let sentinels: Vec<String> = (self.sentinels.iter())
            .map(|sentinel| format!("127.0.0.1:{}", sentinel.port()))
            .collect();
        format!("redis+sentinel://{}/{MASTER}", sentinels.join(","))
    }

    /// The primary's port as the first sentinel that answers names it.
    pub fn primary_port(&self) -> Option<u16> {
        (self.sentinels.iter()).find_map(|sentinel| sentinel.primary_port(MASTER))
    }

    /// The index in [`servers`](Self::servers) of the primary the sentinels name.
    pub fn primary_index(&self) -> Option<usize> {
        let port = self.primary_port()?;
        self.servers.iter().position(|server| server.port() == port)
    }

    /// The primary and its replicas; index 0 is the original primary.
    pub fn servers(&self) -> &[RedisServer] {
        &self.servers
    }

    /// The primary and its replicas, to kill, pause or restart one.
    pub fn servers_mut(&mut self) -> &mut [RedisServer] {
        &mut self.servers
    }

    /// The sentinels.
    pub fn sentinels(&self) -> &[SentinelServer] {
        &self.sentinels
    }

    /// The sentinels, to kill, pause or restart one.
    pub fn sentinels_mut(&mut self) -> &mut [SentinelServer] {
        &mut self.sentinels
    }

    /// Asks a sentinel for a fail-over (`SENTINEL FAILOVER distlock`; one already under way is
    /// joined) and waits as [`wait_fail_over`](Self::wait_fail_over) does. Returns the new
    /// primary's port.
    ///
    /// # Errors
    ///
    /// [`ServerError::Failed`] when no sentinel answers, the sentinels refuse (no replica fit
    /// to promote for 30 s), or the set does not settle within 30 s.
    pub fn fail_over(&mut self) -> Result<u16, ServerError> {
        let old = self.primary_port();
        let old = old.ok_or_else(|| failed("no sentinel names a primary".to_owned()))?;
        let asked = self.ask_fail_over()?;
        self.wait_replaced(old, asked)
    }

    /// Waits until the sentinels have replaced the primary on port `old` (after a
    /// [`fail_over`](Self::fail_over), or after a caller killed it) and the set is settled again
    /// under the new one: every running sentinel names it, it says `role:master`, and every
    /// other running server, the old primary included when it runs, is its replica with the
    /// link up. Converting a running old primary takes the sentinels about 8 s. A paused process
    /// counts as running and so fails the wait. Returns the new primary's port.
    ///
    /// # Errors
    ///
    /// [`ServerError::Failed`] when the set does not settle within 30 s (45 s more each time a
    /// sentinel entered TILT mode meanwhile: one whose timer ran over 2 s late acts on nothing
    /// for 30 s).
    pub fn wait_fail_over(&mut self, old: u16) -> Result<u16, ServerError> {
        self.wait_replaced(old, 0)
    }

    /// As [`wait_fail_over`](Self::wait_fail_over), with the log of sentinel `watched` in
    /// the error.
    fn wait_replaced(&mut self, old: u16, watched: usize) -> Result<u16, ServerError> {
        let mut new = None;
        let settled = self.settle(|set| match set.primary_port() {
            Some(named) if named != old => {
                new = Some(named);
                set.unsettled(named)
            }
            _ => Err(format!("the sentinels still name port {old}")),
        });
        settled.map_err(|reason| self.not_settled("a fail-over", watched, &reason))?;
        new.ok_or_else(|| failed("no sentinel names a primary".to_owned()))
    }

    /// Polls `unsettled` until it finds nothing, for [`SETTLE`], and for [`TILT_WAIT`] more
    /// each time a sentinel turns out to have entered TILT mode since the set last settled.
    fn settle(
        &mut self,
        mut unsettled: impl FnMut(&mut Self) -> Result<(), String>,
    ) -> Result<(), String> {
        let mut limit = SETTLE;
        loop {
            let settled = poll_until(limit, || unsettled(self));
            let tilts = self.tilts();
            if settled.is_ok() || tilts == self.tilts_settled {
                self.tilts_settled = tilts;
                return settled;
            }
            self.tilts_settled = tilts;
            limit = TILT_WAIT;
        }
    }

    /// How many times the sentinels have entered TILT mode, by their logs.
    fn tilts(&self) -> usize {
        self.sentinels.iter().map(SentinelServer::tilts).sum()
    }

    /// Sends `SENTINEL FAILOVER` to the first sentinel that answers, again while it finds no
    /// replica fit to promote (one it has not polled yet); returns that sentinel's index.
    fn ask_fail_over(&self) -> Result<usize, ServerError> {
        let deadline = Instant::now() + SETTLE;
        loop {
            let mut last = "no sentinel answers".to_owned();
            for (index, sentinel) in self.sentinels.iter().enumerate() {
                match call(sentinel.port(), &["SENTINEL", "FAILOVER", MASTER]) {
                    Ok(Reply::Error(error)) if error.starts_with("NOGOODSLAVE") => {
                        last = error;
                        break;
                    }
                    Ok(Reply::Error(error)) if !error.starts_with("INPROG") => {
                        return Err(failed(format!("SENTINEL FAILOVER: {error}")));
                    }
                    Ok(_) => return Ok(index),
                    Err(error) => last = format!("sentinel on {}: {error}", sentinel.port()),
                }
            }
            if Instant::now() > deadline {
                return Err(failed(last));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Why the set is not settled under the primary on port `primary`, among running
    /// processes: each server in its role (replicas linked up to it), each sentinel naming it
    /// with flags `master`, knowing every other sentinel and listing each replica as `slave`.
    fn unsettled(&mut self, primary: u16) -> Result<(), String> {
        let running: Vec<u16> = (self.servers.iter_mut())
            .filter_map(|server| server.process().is_running().then_some(server.port()))
            .collect();
        for server in self.servers.iter().filter(|s| running.contains(&s.port())) {
            let port = server.port();
            let info = server.command("INFO replication").unwrap_or_default();
            let settled = if port == primary {
                info.contains("role:master")
            } else {
                info.contains("role:slave")
                    && info.contains(&format!("master_port:{primary}\r\n"))
                    && info.contains("master_link_status:up")
            };
            if !settled {
                let role = info.lines().filter(|line| line.starts_with("role:"));
                return Err(format!("server on {port}: {}", role.collect::<String>()));
            }
        }
        let sentinels = self.sentinels.len();
        for sentinel in self.sentinels.iter_mut() {
            if !sentinel.process().is_running() {
                continue;
            }
            let port = sentinel.port();
            if sentinel.primary_port(MASTER) != Some(primary) {
                return Err(format!("sentinel on {port} does not name {primary} yet"));
            }
            let master = sentinel.master(MASTER)?;
            let (flags, others) = (
                field(&master, "flags"),
                field(&master, "num-other-sentinels"),
            );
            if flags != "master" || others != (sentinels - 1).to_string() {
                return Err(format!(
                    "sentinel on {port} reports flags {flags}, {others} other sentinels"
                ));
            }
            let replicas = sentinel.replicas(MASTER)?;
            for &expected in running.iter().filter(|port| **port != primary) {
                let seen = replicas
                    .iter()
                    .find(|r| field(r, "port") == expected.to_string());
                // Not its `master-link-status`: for an old primary turned replica, the
                // sentinel's copy stays stale until its next 10 s `INFO`. The servers' own
                // `INFO` above is the truth.
                let flags = seen.map_or("(not listed)", |replica| field(replica, "flags"));
                if flags != "slave" {
                    return Err(format!(
                        "sentinel on {port} sees replica {expected} as {flags}"
                    ));
                }
            }
        }
        Ok(())
    }

    fn not_settled(&self, after: &str, sentinel: usize, reason: &str) -> ServerError {
        let log = self.sentinels.get(sentinel).map(SentinelServer::log_tail);
        failed(format!(
            "not settled after {after} within {SETTLE:?} ({TILT_WAIT:?} more per TILT): {reason}; \
             the log of the sentinel \
             on {}:\n{}",
            self.sentinels.get(sentinel).map_or(0, SentinelServer::port),
            log.unwrap_or_default()
        ))
    }
}

fn failed(reason: String) -> ServerError {
    ServerError::Failed {
        server: "redis-sentinel",
        reason,
    }
}
