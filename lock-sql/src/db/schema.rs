//! The schema step, the same for every dialect: read which tables exist (tables.sql) and
//! create the missing ones (schema.sql), read the lock table's columns from the catalog
//! (columns.sql), add the newer columns a table made by an earlier version lacks
//! (upgrade.sql), and on servers check the user's privileges (see [`super::privileges`]).
//! Nothing is created or altered when nothing is missing, so a service whose database user may
//! not create or alter tables works once an administrator ran the step.

use std::time::Duration;

use sqlx::pool::PoolConnection;
use sqlx::{Database, Executor, FromRow, IntoArguments, SqlStr};

use super::privileges::{self, Probe};
use super::{settle, statement};
use crate::TableName;
use crate::error::{SqlError, timed};

/// One dialect's schema statements, with the table names filled in.
#[derive(Debug)]
pub(crate) struct Schema {
    /// Each table's name and the statement that creates it.
    create: Vec<(String, SqlStr)>,
    tables: SqlStr,
    columns: SqlStr,
    upgrade: Vec<AddColumn>,
    probes: Vec<Probe>,
    /// Whether an error is the server's refusal for want of a privilege.
    denied: fn(&sqlx::Error) -> bool,
}

/// One statement of upgrade.sql, the column it adds, and the statements that fill that
/// column in for the rows already there (run only by the process that added it).
#[derive(Debug)]
struct AddColumn {
    column: String,
    sql: SqlStr,
    fill: Vec<SqlStr>,
}

impl Schema {
    /// The statements of the scripts `[schema, tables, columns, upgrade]` for `table`, with
    /// the dialect's clock `now`. schema.sql creates the lock table, its waiters table and
    /// its claims table, in that order.
    pub(crate) fn new(scripts: [&str; 4], table: &TableName, now: &str) -> Self {
        let [create, tables, columns, upgrade] = scripts;
        let names = [table.as_str().to_owned(), table.waiters(), table.claims()];
        let mut changes: Vec<AddColumn> = Vec::new();
        for text in split(upgrade) {
            let sql = statement(&text, table, now);
            match (added_column(&text), changes.last_mut()) {
                (None, Some(last)) => last.fill.push(sql),
                (column, _) => changes.push(AddColumn {
                    column: column.unwrap_or_default().to_owned(),
                    sql,
                    fill: Vec::new(),
                }),
            }
        }
        Self {
            create: names
                .into_iter()
                .zip(split(create).iter().map(|text| statement(text, table, now)))
                .collect(),
            tables: statement(tables, table, now),
            columns: statement(columns, table, now),
            upgrade: changes,
            probes: Vec::new(),
            denied: |_| false,
        }
    }

    /// Ends the step with the privileges check, identifiers quoted with `quote`; `denied`
    /// tells the server's "permission denied" among errors.
    #[cfg_attr(not(any(feature = "postgres", feature = "mysql")), allow(dead_code))]
    pub(crate) fn checking_privileges(
        mut self,
        table: &TableName,
        quote: char,
        denied: fn(&sqlx::Error) -> bool,
    ) -> Self {
        self.probes = privileges::probes(table, quote);
        self.denied = denied;
        self
    }

    /// Runs the step on `conn`, each statement within `timeout`. `duplicate` tells an error
    /// that only says another process added the column first.
    pub(crate) async fn apply<DB>(
        &self,
        conn: &mut PoolConnection<DB>,
        timeout: Duration,
        duplicate: fn(&sqlx::Error) -> bool,
    ) -> Result<(), SqlError>
    where
        DB: Database,
        for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
        <DB as Database>::Arguments: IntoArguments<DB>,
        (String,): for<'r> FromRow<'r, DB::Row>,
    {
        let query = sqlx::query_scalar::<DB, String>(self.tables.clone());
        let result = timed(timeout, query.fetch_all(&mut **conn)).await;
        let existing = settle(conn, result)?;
        for (name, create) in &self.create {
            if existing
                .iter()
                .any(|found| found.eq_ignore_ascii_case(name))
            {
                continue;
            }
            let query = sqlx::query::<DB>(create.clone());
            let result = timed(timeout, query.execute(&mut **conn)).await;
            settle(conn, result)?;
        }
        let query = sqlx::query_scalar::<DB, String>(self.columns.clone());
        let result = timed(timeout, query.fetch_all(&mut **conn)).await;
        let present = settle(conn, result)?;
        for add in &self.upgrade {
            if present
                .iter()
                .any(|name| name.eq_ignore_ascii_case(&add.column))
            {
                continue;
            }
            let query = sqlx::query::<DB>(add.sql.clone());
            let result = timed(timeout, query.execute(&mut **conn)).await;
            match settle(conn, result) {
                // Another process added it, and fills it in.
                Err(SqlError::Sqlx(error)) if duplicate(&error) => continue,
                other => drop(other?),
            }
            for fill in &add.fill {
                let query = sqlx::query::<DB>(fill.clone());
                let result = timed(timeout, query.execute(&mut **conn)).await;
                settle(conn, result)?;
            }
        }
        for probe in &self.probes {
            let query = sqlx::query::<DB>(probe.sql.clone());
            let result = timed(timeout, query.execute(&mut **conn)).await;
            settle(conn, result).map_err(|error| privileges::refused(probe, error, self.denied))?;
        }
        Ok(())
    }
}

/// The statements of a script: split at each `;` that ends a line, comment lines dropped,
/// trimmed, and chunks left empty skipped.
fn split(script: &str) -> Vec<String> {
    let mut statements = Vec::new();
    let mut current = String::new();
    for line in script.lines() {
        if line.trim_start().starts_with("--") {
            continue;
        }
        let trimmed = line.trim_end();
        match trimmed.strip_suffix(';') {
            Some(last) => {
                current.push_str(last);
                statements.push(std::mem::take(&mut current));
            }
            None => {
                current.push_str(trimmed);
                current.push('\n');
            }
        }
    }
    statements.push(current);
    statements
        .into_iter()
        .map(|text| text.trim().to_owned())
        .filter(|text| !text.is_empty())
        .collect()
}

/// The column an `ALTER TABLE ... ADD COLUMN [IF NOT EXISTS] name ...` statement adds.
fn added_column(statement: &str) -> Option<&str> {
    let mut words = statement.split_whitespace();
    words
        .by_ref()
        .find(|word| word.eq_ignore_ascii_case("COLUMN"))?;
    let mut words = words.peekable();
    if words
        .peek()
        .is_some_and(|word| word.eq_ignore_ascii_case("IF"))
    {
        words.nth(2)?;
    }
    words.next()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_split_into_statements_without_comments() {
        let script = "-- header\nCREATE a (\n  x;y\n);\n\n-- between\nCREATE b;\n-- trailer\n";
        assert_eq!(split(script), vec!["CREATE a (\n  x;y\n)", "CREATE b"]);
        assert_eq!(split("SELECT 1\n"), vec!["SELECT 1"]);
    }

    #[test]
    fn every_upgrade_names_its_column() {
        let first = ["owner_label", "granted_at", "queued_at"];
        let scripts = [
            (
                include_str!("../../sql/postgres/upgrade.sql"),
                &[
                    "grant_owner",
                    "grant_lease_us",
                    "grant_label",
                    "queued_until",
                ][..],
            ),
            (
                include_str!("../../sql/mysql/upgrade.sql"),
                &[
                    "queued_until",
                    "sleeper",
                    "grant_owner",
                    "grant_lease_us",
                    "grant_label",
                ][..],
            ),
            (
                include_str!("../../sql/sqlite/upgrade.sql"),
                &["grant_owner", "grant_lease_ms", "grant_label"][..],
            ),
        ];
        for (script, more) in scripts {
            let statements = split(script);
            let columns: Vec<_> = statements.iter().filter_map(|s| added_column(s)).collect();
            let expected: Vec<_> = first.iter().chain(more).copied().collect();
            assert_eq!(columns, expected, "{script}");
            let leads = statements.first().and_then(|s| added_column(s));
            assert!(leads.is_some(), "a fill with no column before it: {script}");
        }
    }

    #[test]
    fn every_create_script_has_all_three_tables() {
        let scripts = [
            include_str!("../../sql/postgres/schema.sql"),
            include_str!("../../sql/mysql/schema.sql"),
            include_str!("../../sql/sqlite/schema.sql"),
        ];
        for script in scripts {
            let statements = split(script);
            assert_eq!(statements.len(), 3, "{script}");
            assert!(statements[0].contains("{table}") && statements[1].contains("{waiters}"));
            assert!(statements[2].contains("{claims}"), "{script}");
            for column in ["owner_label", "granted_at"] {
                assert!(statements[0].contains(column), "{column} missing: {script}");
            }
        }
    }
}
