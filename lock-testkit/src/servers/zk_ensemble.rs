//! A ZooKeeper ensemble of N nodes on loopback.

use super::ports::PortReservation;
use super::zookeeper::{NodeConfig, Reaping, ZkServer};
use crate::ServerError;

/// An ensemble of ZooKeeper nodes on loopback, each a [`ZkServer`].
#[derive(Debug)]
pub struct ZkEnsemble {
    nodes: Vec<ZkServer>,
}

impl ZkEnsemble {
    /// Starts `size` nodes and waits until each serves as leader or follower.
    ///
    /// # Errors
    ///
    /// As [`ZkServer::start`].
    pub fn start(size: usize) -> Result<Self, ServerError> {
        let mut reserved = Vec::with_capacity(size);
        for _ in 0..size {
            reserved.push(vec![
                PortReservation::new()?,
                PortReservation::new()?,
                PortReservation::new()?,
            ]);
        }
        let peers: Vec<(u16, u16, u16)> = reserved
            .iter()
            .map(|ports| (ports[0].port(), ports[1].port(), ports[2].port()))
            .collect();
        let mut nodes = Vec::with_capacity(size);
        for (index, reservations) in reserved.into_iter().enumerate() {
            let config = NodeConfig {
                tick_ms: 500,
                my_id: Some(index + 1),
                peers: &peers,
                env: &[],
                tls: None,
                reap_every: Reaping::Soon,
            };
            nodes.push(ZkServer::launch(reservations, &config)?);
        }
        for node in &mut nodes {
            node.wait_ready(
                |answer| answer.contains("Mode: leader") || answer.contains("Mode: follower"),
                "srvr",
            )?;
        }
        Ok(Self { nodes })
    }

    /// The nodes, in `myid` order.
    pub fn nodes(&mut self) -> &mut [ZkServer] {
        &mut self.nodes
    }

    /// The connect string with every node: `127.0.0.1:P1,127.0.0.1:P2,...`.
    pub fn connect_string(&self) -> String {
        self.nodes
            .iter()
            .map(ZkServer::connect_string)
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The ensemble's URL: `zk://127.0.0.1:P1,127.0.0.1:P2,...`.
    pub fn url(&self) -> String {
        format!("zk://{}", self.connect_string())
    }

    /// The index of the node that currently leads, if any answers `Mode: leader`.
    pub fn leader(&self) -> Option<usize> {
        self.nodes
            .iter()
            .position(|node| node.mode().as_deref() == Some("leader"))
    }
}
