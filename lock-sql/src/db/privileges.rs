//! The privileges check that ends the schema step on PostgreSQL and MySQL/MariaDB: one
//! statement per table and privilege the lock service uses, each matching no row, so nothing
//! changes but the server checks the privilege. A user missing one is refused at the first
//! connection with the table and the privilege named, instead of failing later in the middle
//! of an acquisition (or, for waiter entries, not at all: their removal fails quietly).

use sqlx::SqlStr;
use sqlx::{AssertSqlSafe, SqlSafeStr};

use crate::TableName;
use crate::error::SqlError;

/// One check: the statement, and what it proves the user may do.
#[derive(Debug)]
pub(crate) struct Probe {
    pub(crate) table: String,
    pub(crate) privilege: &'static str,
    pub(crate) sql: SqlStr,
}

/// For each table, the privileges the lock service needs and a column its statements update.
/// The lock and claim rows are never deleted (release keeps the fencing counter); waiter
/// entries are.
#[cfg_attr(not(any(feature = "postgres", feature = "mysql")), allow(dead_code))]
fn needs(table: &TableName) -> [(String, &'static [&'static str], &'static str); 3] {
    const KEEP: &[&str] = &["SELECT", "INSERT", "UPDATE"];
    const ALL: &[&str] = &["SELECT", "INSERT", "UPDATE", "DELETE"];
    [
        (table.as_str().to_owned(), KEEP, "lease_end"),
        (table.waiters(), ALL, "expires_at"),
        (table.claims(), KEEP, "version"),
    ]
}

/// The checks for `table` and its companions, identifiers quoted with `quote`.
#[cfg_attr(not(any(feature = "postgres", feature = "mysql")), allow(dead_code))]
pub(crate) fn probes(table: &TableName, quote: char) -> Vec<Probe> {
    let mut probes = Vec::new();
    for (name, privileges, column) in needs(table) {
        let quoted = format!("{quote}{name}{quote}");
        for &privilege in privileges {
            let text = match privilege {
                "SELECT" => format!("SELECT * FROM {quoted} WHERE 1 = 0"),
                "INSERT" => format!("INSERT INTO {quoted} SELECT * FROM {quoted} WHERE 1 = 0"),
                "UPDATE" => format!("UPDATE {quoted} SET {column} = {column} WHERE 1 = 0"),
                _ => format!("DELETE FROM {quoted} WHERE 1 = 0"),
            };
            probes.push(Probe {
                table: name.clone(),
                privilege,
                // Only validated identifiers are spliced in.
                sql: AssertSqlSafe(text).into_sql_str(),
            });
        }
    }
    probes
}

/// `error`, or [`SqlError::Privilege`] naming the probe's table and privilege when `denied`
/// (the dialect's test) says the server refused the statement for want of a privilege.
pub(crate) fn refused(
    probe: &Probe,
    error: SqlError,
    denied: fn(&sqlx::Error) -> bool,
) -> SqlError {
    match error {
        SqlError::Sqlx(source) if denied(&source) => SqlError::Privilege {
            table: probe.table.clone(),
            privilege: probe.privilege,
            source,
        },
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_needed_privilege_has_one_probe() {
        let table = TableName::new("locks").expect("valid");
        let probes = probes(&table, '`');
        let named: Vec<String> = probes
            .iter()
            .map(|p| format!("{} {}", p.privilege, p.table))
            .collect();
        assert_eq!(named.len(), 10, "{named:?}");
        assert!(named.contains(&"DELETE locks_waiters".to_owned()));
        assert!(!named.contains(&"DELETE locks".to_owned()));
        let update = probes
            .iter()
            .find(|p| p.privilege == "UPDATE" && p.table == "locks_claims")
            .expect("probe");
        assert_eq!(
            update.sql.as_str(),
            "UPDATE `locks_claims` SET version = version WHERE 1 = 0"
        );
    }
}
