//! The schema step, the same for every dialect: create the tables (schema.sql), read the lock
//! table's columns from the catalog (columns.sql), and add the newer columns a table made by
//! an earlier version lacks (upgrade.sql). Nothing is altered when nothing is missing, so a
//! service whose database user may not alter the table works once the table is up to date.

use std::time::Duration;

use sqlx::pool::PoolConnection;
use sqlx::{Database, Executor, FromRow, IntoArguments, SqlStr};

use super::{settle, statement};
use crate::TableName;
use crate::error::{SqlError, timed};

/// One dialect's schema statements, with the table names filled in.
#[derive(Debug)]
pub(crate) struct Schema {
    create: Vec<SqlStr>,
    columns: SqlStr,
    upgrade: Vec<AddColumn>,
}

/// One statement of upgrade.sql and the column it adds.
#[derive(Debug)]
struct AddColumn {
    column: String,
    sql: SqlStr,
}

impl Schema {
    /// The statements of the three scripts for `table`, with the dialect's clock `now`.
    pub(crate) fn new(
        create: &str,
        columns: &str,
        upgrade: &str,
        table: &TableName,
        now: &str,
    ) -> Self {
        let upgrade = split(upgrade)
            .into_iter()
            .map(|text| AddColumn {
                column: added_column(&text).unwrap_or_default().to_owned(),
                sql: statement(&text, table, now),
            })
            .collect();
        Self {
            create: split(create)
                .iter()
                .map(|text| statement(text, table, now))
                .collect(),
            columns: statement(columns, table, now),
            upgrade,
        }
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
        for create in &self.create {
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
                Err(SqlError::Sqlx(error)) if duplicate(&error) => {}
                other => drop(other?),
            }
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
        let scripts = [
            include_str!("../../sql/postgres/upgrade.sql"),
            include_str!("../../sql/mysql/upgrade.sql"),
            include_str!("../../sql/sqlite/upgrade.sql"),
        ];
        for script in scripts {
            let statements = split(script);
            let columns: Vec<_> = statements.iter().map(|s| added_column(s)).collect();
            let expected = vec![Some("owner_label"), Some("granted_at")];
            assert_eq!(columns, expected, "{script}");
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
