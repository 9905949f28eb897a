//! The Redis Cluster and Sentinel spawners: a cluster serves a key from its slot's primary,
//! keeps it through a slot migration and fail-overs; a sentinel set fails over, on request and
//! after a kill, to replicas that take writes. Both leave no process behind once dropped.

use std::path::Path;
use std::time::{Duration, Instant};

use lock_testkit::require;
use lock_testkit::servers::{RedisCluster, RedisSentinel, RedisServer};

fn assert_gone(pids: &[u32]) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while pids
        .iter()
        .any(|pid| Path::new(&format!("/proc/{pid}")).exists())
    {
        assert!(
            Instant::now() < deadline,
            "processes {pids:?} outlived drop"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn send(server: &RedisServer, line: &str) -> String {
    server
        .command(line)
        .unwrap_or_else(|error| panic!("{line} on {}: {error}", server.port()))
}

fn assert_value(server: &RedisServer, key: &str, value: &str) {
    let reply = send(server, &format!("GET {key}"));
    assert_eq!(
        reply,
        format!("${}\r\n{value}\r\n", value.len()),
        "GET on {}",
        server.port()
    );
}

fn cluster_ok(cluster: &mut RedisCluster) {
    for node in cluster.nodes_mut() {
        if node.process().is_running() {
            assert!(send(node, "CLUSTER INFO").contains("cluster_state:ok"));
        }
    }
}

#[test]
fn cluster_keeps_a_key_through_migration_and_fail_overs() {
    let Some(mut cluster) = require(RedisCluster::start(3, 1)) else {
        return;
    };
    let started = Instant::now();
    let pids: Vec<u32> = (cluster.nodes_mut().iter_mut())
        .filter_map(|node| node.process().pid())
        .collect();
    assert_eq!(pids.len(), 6);
    let primaries = cluster.primaries();
    assert_eq!(primaries.len(), 3, "primaries {primaries:?}");
    let seeds: Vec<String> = (primaries.iter())
        .map(|&i| format!("127.0.0.1:{}", cluster.nodes()[i].port()))
        .collect();
    assert_eq!(
        cluster.url(),
        format!("redis+cluster://{}", seeds.join(","))
    );
    for &primary in &primaries {
        let replica = cluster
            .replica_of(primary)
            .expect("every primary has a replica");
        assert!(!primaries.contains(&replica));
        assert_eq!(cluster.node_id(primary).map(|id| id.len()), Some(40));
    }

    let key = "distlock-topology";
    let slot = send(&cluster.nodes()[0], &format!("CLUSTER KEYSLOT {key}"));
    let slot: u16 = slot.trim().trim_start_matches(':').parse().expect("a slot");
    let owner = cluster
        .primary_of_slot(slot)
        .expect("the slot has an owner");
    assert!(send(&cluster.nodes()[owner], &format!("SET {key} kept")).starts_with("+OK"));
    assert_value(&cluster.nodes()[owner], key, "kept");
    let other = *primaries
        .iter()
        .find(|&&p| p != owner)
        .expect("another primary");
    let moved = send(&cluster.nodes()[other], &format!("GET {key}"));
    let owner_port = cluster.nodes()[owner].port();
    assert_eq!(
        moved.trim(),
        format!("-MOVED {slot} 127.0.0.1:{owner_port}")
    );

    assert_eq!(
        cluster.migrate_slot(slot, owner, other).expect("migrate"),
        1
    );
    assert_eq!(cluster.primary_of_slot(slot), Some(other));
    assert_value(&cluster.nodes()[other], key, "kept");
    let other_port = cluster.nodes()[other].port();
    let moved = send(&cluster.nodes()[owner], &format!("GET {key}"));
    assert_eq!(
        moved.trim(),
        format!("-MOVED {slot} 127.0.0.1:{other_port}")
    );

    // A manual fail-over of the slot's new owner, which stays up and becomes a replica.
    let replica = cluster
        .replica_of(other)
        .expect("the new owner has a replica");
    cluster.fail_over(replica).expect("fail over");
    assert_eq!(cluster.primary_of_slot(slot), Some(replica));
    assert_eq!(cluster.replica_of(replica), Some(other));
    assert_value(&cluster.nodes()[replica], key, "kept");
    cluster_ok(&mut cluster);

    // A forced fail-over of a primary that was killed.
    let third = *(primaries.iter())
        .find(|&&p| p != owner && p != other)
        .expect("a third primary");
    let third_slot = (0..16384u16)
        .find(|&s| cluster.primary_of_slot(s) == Some(third))
        .expect("the third primary serves a slot");
    let heir = cluster
        .replica_of(third)
        .expect("the third primary has a replica");
    cluster.nodes_mut()[third].process().kill();
    cluster.fail_over(heir).expect("forced fail over");
    assert_eq!(cluster.primary_of_slot(third_slot), Some(heir));
    cluster_ok(&mut cluster);
    eprintln!("cluster scenario took {:?} after start", started.elapsed());

    drop(cluster);
    assert_gone(&pids);
}

#[test]
fn sentinels_fail_over_to_a_replica_that_takes_writes() {
    let Some(mut set) = require(RedisSentinel::start(2, 3)) else {
        return;
    };
    let started = Instant::now();
    let mut pids: Vec<u32> = (set.servers_mut().iter_mut())
        .filter_map(|server| server.process().pid())
        .collect();
    pids.extend((set.sentinels_mut().iter_mut()).filter_map(|sentinel| sentinel.process().pid()));
    assert_eq!(pids.len(), 6);
    assert_eq!(set.master_name(), "distlock");
    let sentinels: Vec<String> = (set.sentinels().iter())
        .map(|sentinel| format!("127.0.0.1:{}", sentinel.port()))
        .collect();
    assert_eq!(
        set.url(),
        format!("redis+sentinel://{}/distlock", sentinels.join(","))
    );
    let old = set.servers()[0].port();
    assert_eq!(set.primary_port(), Some(old));
    assert_eq!(set.primary_index(), Some(0));

    let new = set.fail_over().expect("fail over");
    assert_ne!(new, old);
    assert_eq!(set.primary_port(), Some(new));
    for sentinel in set.sentinels() {
        assert_eq!(sentinel.primary_port("distlock"), Some(new));
    }
    let index = set
        .primary_index()
        .expect("the new primary is one of the servers");
    assert_ne!(index, 0);
    let primary = &set.servers()[index];
    assert!(send(primary, "SET distlock-topology written").starts_with("+OK"));
    assert!(send(&set.servers()[0], "SET distlock-topology refused").starts_with("-READONLY"));

    // The sentinels replace a primary that was killed on their own.
    set.servers_mut()[index].process().kill();
    let newer = set.wait_fail_over(new).expect("fail over after a kill");
    assert_ne!(newer, new);
    let index = set
        .primary_index()
        .expect("the newest primary is one of the servers");
    assert_value(&set.servers()[index], "distlock-topology", "written");
    assert!(send(&set.servers()[index], "SET distlock-topology again").starts_with("+OK"));
    eprintln!("sentinel scenario took {:?} after start", started.elapsed());

    drop(set);
    assert_gone(&pids);
}

/// A sentinel whose timer ran over 2 s late (a starved host, here a paused process) enters TILT
/// mode and acts on nothing for 30 s. A fail-over asked for while every sentinel is tilted
/// still settles: the set waits the tilt out.
#[test]
fn a_fail_over_settles_while_the_sentinels_tilt() {
    let Some(mut set) = require(RedisSentinel::start(1, 3)) else {
        return;
    };
    for sentinel in set.sentinels_mut() {
        sentinel.process().pause().expect("pause");
    }
    std::thread::sleep(Duration::from_millis(2500));
    for sentinel in set.sentinels_mut() {
        sentinel.process().resume().expect("resume");
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while !(set.sentinels().iter()).all(|sentinel| {
        let info = sentinel.command("INFO sentinel").unwrap_or_default();
        info.contains("sentinel_tilt:1")
    }) {
        assert!(Instant::now() < deadline, "the sentinels did not tilt");
        std::thread::sleep(Duration::from_millis(50));
    }
    let old = set.servers()[0].port();
    let new = set.fail_over().expect("fail over");
    assert_ne!(new, old);
    assert_eq!(set.primary_port(), Some(new));
}
