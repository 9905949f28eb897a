//! Server-side counters: requests served and memory used, per server kind.

use std::collections::HashMap;

use lock_redis::redis;
use lock_sql::sqlx::{self, Connection, Row};
use lock_testkit::servers::four_letter;

use crate::BenchResult;
use crate::servers::host_port;

/// Commands Redis has executed, from `INFO commandstats` (the `INFO` calls themselves left out).
///
/// # Cancel safety
///
/// Cancel safe: it only reads, and dropping it closes its connection.
///
/// # Errors
///
/// The connection's error.
pub async fn redis_commands(url: &str) -> BenchResult<u64> {
    let info = redis_info(url, "commandstats").await?;
    Ok(parse_commandstats(&info))
}

/// The total `calls=` of every `cmdstat_` line except `cmdstat_info`.
pub fn parse_commandstats(info: &str) -> u64 {
    info.lines()
        .filter(|line| line.starts_with("cmdstat_") && !line.starts_with("cmdstat_info:"))
        .filter_map(|line| line.split("calls=").nth(1))
        .filter_map(|rest| rest.split(',').next())
        .filter_map(|calls| calls.parse::<u64>().ok())
        .sum()
}

/// Redis `used_memory` in bytes.
///
/// # Cancel safety
///
/// Cancel safe: it only reads, and dropping it closes its connection.
///
/// # Errors
///
/// The connection's error, or no such field.
pub async fn redis_memory(url: &str) -> BenchResult<u64> {
    let info = redis_info(url, "memory").await?;
    info_field(&info, "used_memory").ok_or_else(|| "INFO memory has no used_memory".into())
}

/// One `key:value` field of an `INFO` reply.
pub fn info_field(info: &str, key: &str) -> Option<u64> {
    info.lines()
        .find_map(|line| line.strip_prefix(key)?.strip_prefix(':'))
        .and_then(|value| value.trim().parse().ok())
}

async fn redis_info(url: &str, section: &str) -> BenchResult<String> {
    let client = redis::Client::open(url)?;
    let mut connection = client.get_multiplexed_async_connection().await?;
    let info: String = redis::cmd("INFO")
        .arg(section)
        .query_async(&mut connection)
        .await?;
    Ok(info)
}

/// ZooKeeper's `mntr` as key/value pairs.
///
/// # Errors
///
/// A URL without a port, or the connection's error.
pub fn zk_mntr(url: &str) -> BenchResult<HashMap<String, String>> {
    let (_, port) = host_port(url).ok_or("no port in the ZooKeeper URL")?;
    let answer = four_letter(port, "mntr")?;
    Ok(parse_mntr(&answer))
}

/// Parses `mntr`'s tab-separated lines.
pub fn parse_mntr(answer: &str) -> HashMap<String, String> {
    answer
        .lines()
        .filter_map(|line| line.split_once('\t'))
        .map(|(key, value)| (key.trim().to_owned(), value.trim().to_owned()))
        .collect()
}

/// One numeric `mntr` field (0 when absent).
pub fn mntr_number(mntr: &HashMap<String, String>, key: &str) -> f64 {
    mntr.get(key).and_then(|v| v.parse().ok()).unwrap_or(0.0)
}

/// ZooKeeper packets received (client requests, including pings).
///
/// # Errors
///
/// As [`zk_mntr`].
pub fn zk_packets(url: &str) -> BenchResult<u64> {
    Ok(mntr_number(&zk_mntr(url)?, "zk_packets_received") as u64)
}

/// The settings the benchmark's PostgreSQL server starts with so that [`pg_statements`] can
/// count: `pg_stat_statements` loaded, with room for every distinct statement text of a run
/// (each service's `LISTEN` names its own channel), so no entry is evicted and no count lost.
pub const PG_COUNTING_SETTINGS: [&str; 2] = [
    "shared_preload_libraries=pg_stat_statements",
    "pg_stat_statements.max=100000",
];

/// Top-level statements PostgreSQL has finished in the URL's database, from
/// `pg_stat_statements` (the counter's own statements left out). They count as each statement
/// finishes. `pg_stat_database`'s transaction counts do not: a backend publishes them at most
/// once a second and, once idle, only after 10 s or when it exits, so over a window of seconds
/// they land in a later window.
///
/// # Cancel safety
///
/// Cancel safe: it only reads (creating the extension's view once), and dropping it closes its
/// connection.
///
/// # Errors
///
/// The connection's or query's error; on a server that did not preload `pg_stat_statements`
/// (see [`PG_COUNTING_SETTINGS`]), the query's error says so.
pub async fn pg_statements(url: &str) -> BenchResult<u64> {
    let mut connection = sqlx::PgConnection::connect(url).await?;
    sqlx::query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        .execute(&mut connection)
        .await?;
    let row = sqlx::query(
        "SELECT coalesce(sum(calls), 0)::bigint FROM pg_stat_statements \
         WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) \
         AND query NOT LIKE '%pg_stat_statements%'",
    )
    .fetch_one(&mut connection)
    .await?;
    let count: i64 = row.try_get(0)?;
    connection.close().await?;
    Ok(count as u64)
}

/// `pg_total_relation_size` of `table` in bytes (0 when it does not exist).
///
/// # Cancel safety
///
/// Cancel safe: it only reads, and dropping it closes its connection.
///
/// # Errors
///
/// The connection's or query's error.
pub async fn pg_table_size(url: &str, table: &str) -> BenchResult<u64> {
    let mut connection = sqlx::PgConnection::connect(url).await?;
    let row = sqlx::query("SELECT COALESCE(pg_total_relation_size(to_regclass($1)), 0)::bigint")
        .bind(table)
        .fetch_one(&mut connection)
        .await?;
    let size: i64 = row.try_get(0)?;
    connection.close().await?;
    Ok(size as u64)
}

/// Bytes InnoDB uses for `table` (data plus indexes), after `ANALYZE TABLE` refreshes the
/// statistics; InnoDB counts whole 16 KiB pages, so small tables read coarsely.
///
/// # Cancel safety
///
/// Cancel safe: it only reads (and refreshes statistics), and dropping it closes its connection.
///
/// # Errors
///
/// The connection's or query's error.
pub async fn mysql_table_size(url: &str, table: &str) -> BenchResult<u64> {
    if !table.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(format!("{table:?} is not a plain table name").into());
    }
    let mut connection = sqlx::MySqlConnection::connect(url).await?;
    let analyze = sqlx::AssertSqlSafe(format!("ANALYZE TABLE `{table}`"));
    sqlx::query(analyze).execute(&mut connection).await?;
    let row = sqlx::query(
        "SELECT CAST(COALESCE(SUM(data_length + index_length), 0) AS UNSIGNED) \
         FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?",
    )
    .bind(table)
    .fetch_one(&mut connection)
    .await?;
    let size: u64 = row.try_get(0)?;
    connection.close().await?;
    Ok(size)
}

/// MariaDB/MySQL statements received (`Questions`).
///
/// # Cancel safety
///
/// Cancel safe: it only reads, and dropping it closes its connection.
///
/// # Errors
///
/// The connection's or query's error.
pub async fn mysql_questions(url: &str) -> BenchResult<u64> {
    let mut connection = sqlx::MySqlConnection::connect(url).await?;
    let row = sqlx::query("SHOW GLOBAL STATUS LIKE 'Questions'")
        .fetch_one(&mut connection)
        .await?;
    let value: String = row.try_get(1)?;
    connection.close().await?;
    Ok(value.parse()?)
}
