//! Every server kind starts, answers, survives pause/resume, restarts, and leaves no process
//! behind once dropped.

use std::net::TcpStream;
use std::path::Path;
use std::time::{Duration, Instant};

use lock_testkit::require;
use lock_testkit::servers::{
    MariaDbServer, PostgresServer, RedisServer, ServerProcess, ZkEnsemble, ZkServer, four_letter,
};

fn alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// Whether a connection to `port` is answered within `limit`: a paused server accepts (the
/// kernel does that) but never answers, which the probe tells apart.
fn answers(port: u16, probe: impl Fn(u16) -> bool) -> bool {
    TcpStream::connect(("127.0.0.1", port)).is_ok() && probe(port)
}

fn assert_gone(pids: &[u32]) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while pids.iter().any(|pid| alive(*pid)) {
        assert!(
            Instant::now() < deadline,
            "server processes {pids:?} still alive after drop"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn pause_resume(process: &mut ServerProcess, port: u16, probe: impl Fn(u16) -> bool + Copy) {
    assert!(answers(port, probe), "server on {port} does not answer");
    process.pause().expect("pause");
    assert!(
        !answers(port, probe),
        "paused server on {port} still answers"
    );
    process.resume().expect("resume");
    assert!(
        answers(port, probe),
        "resumed server on {port} does not answer"
    );
}

fn redis_ping(port: u16) -> bool {
    let server = RedisServerProbe(port);
    server.ping()
}

struct RedisServerProbe(u16);

impl RedisServerProbe {
    fn ping(&self) -> bool {
        use std::io::{Read, Write};
        let Ok(mut stream) = TcpStream::connect(("127.0.0.1", self.0)) else {
            return false;
        };
        let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
        let mut reply = [0u8; 7];
        stream.write_all(b"PING\r\n").is_ok()
            && stream.read_exact(&mut reply).is_ok()
            && &reply == b"+PONG\r\n"
    }
}

fn zk_ok(port: u16) -> bool {
    four_letter(port, "ruok").is_ok_and(|answer| answer == "imok")
}

#[test]
fn redis_starts_pauses_restarts_and_stops() {
    let Some(mut server) = require(RedisServer::start()) else {
        return;
    };
    let port = server.port();
    pause_resume(server.process(), port, redis_ping);
    server.restart().expect("restart");
    assert!(
        redis_ping(port),
        "restarted redis does not answer on the same port"
    );
    let pid = server.process().pid().expect("pid");
    server.process().kill();
    assert!(!redis_ping(port), "killed redis still answers");
    drop(server);
    assert_gone(&[pid]);
}

#[test]
fn zookeeper_standalone_starts_pauses_and_stops() {
    let Some(mut server) = require(ZkServer::start()) else {
        return;
    };
    let port = server.port();
    assert_eq!(server.mode().as_deref(), Some("standalone"));
    pause_resume(server.process(), port, zk_ok);
    let pid = server.process().pid().expect("pid");
    drop(server);
    assert_gone(&[pid]);
}

#[test]
fn zookeeper_ensemble_elects_survives_leader_kill_and_stops() {
    let Some(mut ensemble) = require(ZkEnsemble::start(3)) else {
        return;
    };
    let leader = ensemble.leader().expect("an ensemble of 3 has a leader");
    let pids: Vec<u32> = ensemble
        .nodes()
        .iter_mut()
        .filter_map(|node| node.process().pid())
        .collect();
    ensemble.nodes()[leader].process().kill();
    let deadline = Instant::now() + Duration::from_secs(30);
    while ensemble.leader().is_none_or(|new| new == leader) {
        assert!(
            Instant::now() < deadline,
            "no new leader within 30 s of killing the old one"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    drop(ensemble);
    assert_gone(&pids);
}

#[test]
fn postgres_starts_pauses_restarts_and_stops() {
    let Some(mut server) = require(PostgresServer::start()) else {
        return;
    };
    let port = server.port();
    let probe = |port: u16| {
        std::process::Command::new("pg_isready")
            .args(["-q", "-t", "1", "-h", "127.0.0.1", "-p", &port.to_string()])
            .status()
            .is_ok_and(|status| status.success())
    };
    pause_resume(server.process(), port, probe);
    server.restart().expect("restart");
    assert!(probe(port), "restarted postgres does not answer");
    let pid = server.process().pid().expect("pid");
    drop(server);
    assert_gone(&[pid]);
}

#[test]
fn mariadb_starts_pauses_and_stops() {
    let Some(mut server) = require(MariaDbServer::start()) else {
        return;
    };
    let port = server.port();
    assert!(server.url().ends_with("/distlock"));
    let probe = |port: u16| {
        std::process::Command::new("mariadb")
            .args([
                "--protocol=tcp",
                "-h",
                "127.0.0.1",
                "-u",
                "root",
                "--connect-timeout=1",
                "-P",
                &port.to_string(),
                "-e",
                "SELECT 1",
            ])
            .args(["-D", "distlock"])
            .output()
            .is_ok_and(|output| output.status.success())
    };
    pause_resume(server.process(), port, probe);
    let pid = server.process().pid().expect("pid");
    drop(server);
    assert_gone(&[pid]);
}
