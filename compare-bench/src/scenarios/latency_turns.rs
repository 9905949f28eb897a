//! The order in which the latency scenario's systems take their turns in each round.

/// One turn of a latency round: the run's system at this index, or Curator's program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Turn {
    System(usize),
    Curator,
}

/// Curator's backend: its turns go with the ZooKeeper systems'.
const CURATOR_BACKEND: &str = "zookeeper";

/// The turns of round `round` for systems of `backends` (one entry per system, in the run's
/// order), with Curator's when `curator`.
///
/// Each backend's systems take their turns side by side (Curator among ZooKeeper's, backends in
/// the order they first appear), so a system and the floor it is compared with are measured
/// moments apart. Every other round runs the same order backwards: a system that goes first
/// after another backend's turns in one round goes last among its own backend's in the next,
/// and its neighbours' places swap too, so what one turn leaves behind on the machine (a server
/// still flushing pages, a JVM collecting) falls on each system of a backend alike, and a
/// drift over the run falls on both halves of every pair of systems.
pub(crate) fn turns(backends: &[&str], curator: bool, round: usize) -> Vec<Turn> {
    let mut groups: Vec<&str> = Vec::new();
    for backend in backends {
        if !groups.contains(backend) {
            groups.push(backend);
        }
    }
    if curator && !groups.contains(&CURATOR_BACKEND) {
        groups.push(CURATOR_BACKEND);
    }
    let mut order = Vec::with_capacity(backends.len() + 1);
    for group in groups {
        let systems = (backends.iter().enumerate()).filter(|&(_, backend)| *backend == group);
        order.extend(systems.map(|(index, _)| Turn::System(index)));
        if curator && group == CURATOR_BACKEND {
            order.push(Turn::Curator);
        }
    }
    if round % 2 == 1 {
        order.reverse();
    }
    order
}

#[cfg(test)]
mod tests {
    use super::Turn::{Curator, System};
    use super::*;

    const BACKENDS: [&str; 7] = [
        "postgres",
        "zookeeper",
        "redis",
        "postgres",
        "zookeeper",
        "redis",
        "postgres",
    ];

    #[test]
    fn each_backend_takes_its_turns_together_with_curator_among_zookeeper() {
        let order = turns(&BACKENDS, true, 0);
        let expected = [
            System(0),
            System(3),
            System(6),
            System(1),
            System(4),
            Curator,
            System(2),
            System(5),
        ];
        assert_eq!(order, expected);
    }

    #[test]
    fn every_other_round_runs_backwards() {
        let forward = turns(&BACKENDS, true, 2);
        let mut backward = turns(&BACKENDS, true, 3);
        assert_ne!(forward, backward);
        backward.reverse();
        assert_eq!(forward, backward);
    }

    #[test]
    fn curator_alone_or_left_out() {
        assert_eq!(turns(&[], true, 0), [Curator]);
        let order = turns(&BACKENDS, false, 0);
        assert!(!order.contains(&Curator));
        assert_eq!(order.len(), BACKENDS.len());
    }
}
