//! Client requests Redis receives, counted from `MONITOR`: `INFO commandstats` also counts the
//! commands a Lua script runs, which would charge one script call several times.

use std::io::{BufRead, BufReader, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::BenchResult;
use crate::servers::host_port;

/// A `MONITOR` connection counting top-level client commands (not `INFO`, not script-internal).
#[derive(Debug)]
pub struct RedisMonitor {
    stream: TcpStream,
    count: Arc<AtomicU64>,
}

impl RedisMonitor {
    /// Connects to the Redis at `url` and starts counting.
    ///
    /// # Errors
    ///
    /// The connection's error.
    pub fn start(url: &str) -> BenchResult<Self> {
        let (host, port) = host_port(url).ok_or("no port in the Redis URL")?;
        let mut stream = TcpStream::connect((host.as_str(), port))?;
        stream.write_all(b"MONITOR\r\n")?;
        let reader = BufReader::new(stream.try_clone()?);
        let count = Arc::new(AtomicU64::new(0));
        let counted = Arc::clone(&count);
        std::thread::spawn(move || {
            for line in reader.lines() {
                let Ok(line) = line else { break };
                if is_client_command(&line) {
                    counted.fetch_add(1, Ordering::Relaxed);
                }
            }
        });
        Ok(Self { stream, count })
    }

    /// Commands counted so far.
    pub fn count(&self) -> u64 {
        self.count.load(Ordering::Relaxed)
    }
}

impl Drop for RedisMonitor {
    fn drop(&mut self) {
        let _ = self.stream.shutdown(Shutdown::Both);
    }
}

/// Whether a `MONITOR` line is a command a client sent: not one a script ran, and not the
/// counters' own `INFO` or connection handshake (`HELLO`, `CLIENT SETINFO`).
pub fn is_client_command(line: &str) -> bool {
    let Some((_, command)) = line.split_once("] \"") else {
        return false;
    };
    let command = command
        .split('"')
        .next()
        .unwrap_or_default()
        .to_ascii_uppercase();
    line.starts_with('+')
        && !line.contains(" lua]")
        && !matches!(command.as_str(), "INFO" | "HELLO" | "CLIENT")
}
