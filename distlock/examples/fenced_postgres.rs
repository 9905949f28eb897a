//! Fencing tokens checked by PostgreSQL, the protected store, in the write's `WHERE` clause.
//!
//! ```text
//! DATABASE_URL=postgres://user@host/db cargo run -p distlock --features postgres --example fenced_postgres
//! ```
//!
//! Holder A takes the lock with a short lease and stalls past it (a GC pause, a frozen VM):
//! the lease ends and holder B takes the lock. When A wakes it still tries to write. The table
//! remembers the highest token that wrote, so A's late write changes nothing, and A learns it
//! was fenced off.

use std::time::Duration;

use distlock::sql::sqlx::{self, PgPool};
use distlock::{AcquireOptions, DistributedLockExt, ErrorKind};

const ACCOUNT: i32 = 1;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::var("DATABASE_URL").map_err(|_| "set DATABASE_URL to a PostgreSQL URL")?;
    let store = PgPool::connect(&url).await?;
    sqlx::query("CREATE TABLE IF NOT EXISTS fenced_accounts (id INT PRIMARY KEY, balance BIGINT NOT NULL, fence BIGINT NOT NULL)")
        .execute(&store)
        .await?;
    sqlx::query(
        "INSERT INTO fenced_accounts VALUES ($1, 0, 0) ON CONFLICT (id) DO UPDATE SET balance = 0",
    )
    .bind(ACCOUNT)
    .execute(&store)
    .await?;

    let (a, b) = (
        distlock::connect(&url).await?,
        distlock::connect(&url).await?,
    );
    let short = AcquireOptions::builder()
        .lease(Duration::from_millis(500))
        .auto_renew(false)
        .build()?;
    let stale = a.acquire_timeout_with("accounts/1", &short).await?;
    println!("A holds the lock with token {}", stale.fencing_token());
    assert_write(
        write(&store, 100, stale.fencing_token()).await?,
        true,
        "A's first write",
    )?;

    tokio::time::sleep(Duration::from_millis(1200)).await; // A stalls past its lease
    let fresh = b
        .acquire_timeout("accounts/1", Duration::from_secs(5))
        .await?;
    println!("B holds the lock with token {}", fresh.fencing_token());
    assert_write(
        write(&store, 200, fresh.fencing_token()).await?,
        true,
        "B's write",
    )?;

    // A wakes and writes before looking at its lost signal: the store refuses.
    assert_write(
        write(&store, 999, stale.fencing_token()).await?,
        false,
        "A's late write",
    )?;
    println!(
        "A's late write with token {} was rejected; A's lost signal: {}",
        stale.fencing_token(),
        stale.is_lost()
    );
    match stale.release().await {
        Err(error) if error.kind() == ErrorKind::NotHeld => println!("A's release: {error}"),
        other => return Err(format!("A's release should say NotHeld, said {other:?}").into()),
    }
    fresh.release().await?;

    let balance: i64 = sqlx::query_scalar("SELECT balance FROM fenced_accounts WHERE id = $1")
        .bind(ACCOUNT)
        .fetch_one(&store)
        .await?;
    if balance != 200 {
        return Err(format!("balance is {balance}; the stale write got through").into());
    }
    println!("balance is {balance}: only current holders' writes landed");
    Ok(())
}

/// Writes `balance` if no holder with a larger token has written; returns whether it landed.
async fn write(store: &PgPool, balance: i64, token: u64) -> Result<bool, sqlx::Error> {
    let token = i64::try_from(token).unwrap_or(i64::MAX);
    let done = sqlx::query(
        "UPDATE fenced_accounts SET balance = $1, fence = $2 WHERE id = $3 AND fence <= $2",
    )
    .bind(balance)
    .bind(token)
    .bind(ACCOUNT)
    .execute(store)
    .await?;
    Ok(done.rows_affected() == 1)
}

fn assert_write(landed: bool, expected: bool, what: &str) -> Result<(), String> {
    println!(
        "{what}: {}",
        if landed {
            "accepted"
        } else {
            "rejected (stale token)"
        }
    );
    if landed == expected {
        Ok(())
    } else {
        Err(format!(
            "{what} should have been {}",
            if expected { "accepted" } else { "rejected" }
        ))
    }
}
