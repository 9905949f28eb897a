//! How a client of the PostgreSQL statement floor hears releases, as a lock-sql service does: a
//! listening connection of its own on the table's channel (releases that name the lock alone)
//! and on its own channel, `distlock_` and the first 8 bytes of its waiter entries' ids in hex
//! (grants to its entries). A task forwards what it hears, parsed, to the client.

use lock_sql::sqlx::postgres::PgListener;
use tokio::sync::{Mutex, mpsc};

use crate::BenchResult;

/// What a notification said about the floor's lock.
#[derive(Debug, PartialEq, Eq)]
pub enum Heard {
    /// Released with nobody granted: every acquisition of the lock looks again.
    Released,
    /// Released and the entry with this id is first in line, without grant terms: it looks
    /// again.
    Next([u8; 16]),
    /// Released and granted to the entry with this id.
    Granted([u8; 16]),
}

/// One client's listener: its service id, which begins its entries' ids, and what it heard.
#[derive(Debug)]
pub struct PgLine {
    service: u64,
    heard: Mutex<mpsc::UnboundedReceiver<Heard>>,
    listening: tokio::task::JoinHandle<()>,
}

impl PgLine {
    /// Listens, for the lock `name`, on `table`'s channel and on a new service's channel of the
    /// PostgreSQL server of `url`: subscribed when this returns.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping it closes the connection it was opening.
    ///
    /// # Errors
    ///
    /// The connection's or the `LISTEN`'s error.
    pub async fn listen(url: &str, table: &str, name: &str) -> BenchResult<Self> {
        let service: u64 = rand::random();
        let mut listener = PgListener::connect(url).await?;
        let own = format!("distlock_{service:016x}");
        listener.listen_all([table, own.as_str()]).await?;
        let (sender, heard) = mpsc::unbounded_channel();
        let name = name.to_owned();
        let listening = tokio::spawn(async move {
            while let Ok(notification) = listener.recv().await {
                let Some(heard) = parse(notification.payload(), &name) else {
                    continue;
                };
                if sender.send(heard).is_err() {
                    return;
                }
            }
        });
        Ok(Self {
            service,
            heard: Mutex::new(heard),
            listening,
        })
    }

    /// A new waiter entry id of this client's service.
    pub fn entry_id(&self) -> [u8; 16] {
        let mut id = rand::random::<u128>().to_be_bytes();
        id[..8].copy_from_slice(&self.service.to_be_bytes());
        id
    }

    /// What this client heard, for one acquisition at a time.
    pub fn heard(&self) -> &Mutex<mpsc::UnboundedReceiver<Heard>> {
        &self.heard
    }
}

impl Drop for PgLine {
    fn drop(&mut self) {
        self.listening.abort();
    }
}

/// A release notification's payload (lock-sql's `release.sql`: the name; then, after a
/// newline, the first waiter's entry id in hex; then, after a space, the fence it was granted),
/// when it concerns the lock `name`.
pub fn parse(payload: &str, name: &str) -> Option<Heard> {
    let (released, rest) = match payload.split_once('\n') {
        Some((released, rest)) => (released, Some(rest)),
        None => (payload, None),
    };
    if released != name {
        return None;
    }
    let Some(rest) = rest else {
        return Some(Heard::Released);
    };
    let (entry, granted) = match rest.split_once(' ') {
        Some((entry, _fence)) => (entry, true),
        None => (rest, false),
    };
    let id = u128::from_str_radix(entry, 16).ok()?.to_be_bytes();
    Some(if granted {
        Heard::Granted(id)
    } else {
        Heard::Next(id)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_of_the_floors_lock_are_told_apart_and_others_ignored() {
        let id = 0x0123_4567_89ab_cdef_0011_2233_4455_6677_u128;
        assert_eq!(parse("a/b", "a/b"), Some(Heard::Released));
        assert_eq!(
            parse(&format!("a/b\n{id:032x}"), "a/b"),
            Some(Heard::Next(id.to_be_bytes()))
        );
        assert_eq!(
            parse(&format!("a/b\n{id:032x} 17"), "a/b"),
            Some(Heard::Granted(id.to_be_bytes()))
        );
        assert_eq!(parse(&format!("a/c\n{id:032x} 17"), "a/b"), None);
        assert_eq!(parse("a/b\nnot-hex", "a/b"), None);
    }
}
