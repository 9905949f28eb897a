//! Ports for test servers, reserved so that no other process can take them.
//!
//! Handing a server a port found by binding port 0 and closing it races every other process
//! that binds ports in between (another test binary's server, a client's outgoing connection).
//! Ports here come from a range below the kernel's ephemeral range (32768-60999 by default), so
//! the kernel never hands them to outgoing connections, and each is reserved across processes by
//! an exclusive lock on a file named after it, held while the reservation lives: test processes
//! never pick the same port, and a crashed test process's lock goes with it.

use std::fs::{File, OpenOptions};
use std::net::{Ipv4Addr, TcpListener};
use std::path::PathBuf;

use rustix::fs::{FlockOperation, flock};

use crate::ServerError;

/// The range ports are drawn from: below the ephemeral range, above most well-known services.
const RANGE: std::ops::Range<u16> = 20_000..32_000;

/// A loopback port reserved for one server (or one refused-connection test) for as long as
/// this value lives.
#[derive(Debug)]
pub struct PortReservation {
    port: u16,
    _lock: File,
}

impl PortReservation {
    /// Reserves a port that nothing listens on and no other test process holds.
    ///
    /// # Errors
    ///
    /// [`ServerError::Failed`] when no port could be reserved (the lock directory is not
    /// writable, or 1,000 tries found every port taken).
    pub fn new() -> Result<Self, ServerError> {
        let dir = std::env::temp_dir().join("distlock-ports");
        std::fs::create_dir_all(&dir)
            .map_err(|error| failed(format!("{}: {error}", dir.display())))?;
        for _ in 0..1000 {
            let port = rand::random_range(RANGE);
            if let Some(reservation) = Self::try_port(dir.join(port.to_string()), port)? {
                return Ok(reservation);
            }
        }
        Err(failed(
            "no free port in 20000-31999 after 1000 tries".to_owned(),
        ))
    }

    fn try_port(path: PathBuf, port: u16) -> Result<Option<Self>, ServerError> {
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|error| failed(format!("{}: {error}", path.display())))?;
        if flock(&file, FlockOperation::NonBlockingLockExclusive).is_err() {
            return Ok(None);
        }
        // Something outside the test kit may listen there; binding tells.
        if TcpListener::bind((Ipv4Addr::LOCALHOST, port)).is_err() {
            return Ok(None);
        }
        Ok(Some(Self { port, _lock: file }))
    }

    /// The reserved port.
    pub fn port(&self) -> u16 {
        self.port
    }
}

fn failed(reason: String) -> ServerError {
    ServerError::Failed {
        server: "port reservation",
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reservations_are_distinct_and_bindable() {
        let reservations: Vec<PortReservation> = (0..20)
            .map(|_| PortReservation::new().unwrap_or_else(|error| panic!("{error}")))
            .collect();
        let mut ports: Vec<u16> = reservations.iter().map(PortReservation::port).collect();
        ports.sort_unstable();
        ports.dedup();
        assert_eq!(ports.len(), 20);
        assert!(ports.iter().all(|port| RANGE.contains(port)));
    }
}
