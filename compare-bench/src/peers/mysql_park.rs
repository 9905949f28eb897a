//! What the MySQL/MariaDB floors that park share with a distlock service's parked connections:
//! a user lock held on a connection of its own (the anchor their parks wait for), and a
//! connection to park, with the id a `KILL QUERY` names it by.

use lock_sql::sqlx::{self, Connection, MySqlConnection};

use crate::BenchResult;

/// A fresh user lock named after `prefix`, and the connection that holds it: parks wait for it
/// until it is released, which only happens when that connection ends.
///
/// # Cancel safety
///
/// Cancel safe: dropping it closes the connection it was opening.
///
/// # Errors
///
/// The connection's or statement's error, or the fresh name found taken.
pub async fn hold_anchor(url: &str, prefix: &str) -> BenchResult<(String, MySqlConnection)> {
    let anchor = format!("{prefix}-{:032x}", rand::random::<u128>());
    let mut holder = MySqlConnection::connect(url).await?;
    let (taken,): (Option<i64>,) = sqlx::query_as("SELECT GET_LOCK(?, 0)")
        .bind(anchor.as_str())
        .fetch_one(&mut holder)
        .await?;
    if taken != Some(1) {
        return Err(format!("GET_LOCK of a fresh name returned {taken:?}").into());
    }
    Ok((anchor, holder))
}

/// A connection to park, and its id.
///
/// # Cancel safety
///
/// Cancel safe: dropping it closes the connection it was opening.
///
/// # Errors
///
/// The connection's or statement's error.
pub async fn parked_connection(url: &str) -> BenchResult<(MySqlConnection, u64)> {
    let mut parked = MySqlConnection::connect(url).await?;
    let (id,): (u64,) = sqlx::query_as("SELECT CONNECTION_ID()")
        .fetch_one(&mut parked)
        .await?;
    Ok((parked, id))
}
