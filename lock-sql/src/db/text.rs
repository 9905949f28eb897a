//! Statement texts as lock-sql sends them, made once per service from the `.sql` files.

use sqlx::{AssertSqlSafe, SqlSafeStr, SqlStr};

use crate::TableName;

/// A statement text with the (validated) table names and, for SQLite, the clock filled in, and
/// without its whole-line `--` comments: the driver hashes and compares the whole text at every
/// execution to find its prepared statement, and the comments are most of the text.
pub(crate) fn statement(template: &str, table: &TableName, now: &str) -> SqlStr {
    let code: Vec<&str> = template
        .lines()
        .filter(|line| !line.trim_start().starts_with("--"))
        .collect();
    let text = code
        .join("\n")
        .replace("{table}", table.as_str())
        .replace("{waiters}", &table.waiters())
        .replace("{claims}", &table.claims())
        .replace("{now}", now);
    // The only text spliced in is validated identifiers and a constant expression. Shared:
    // sqlx clones the text for each execution, which copies an owned `String`.
    AssertSqlSafe(std::sync::Arc::<str>::from(text)).into_sql_str()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_keep_their_code_and_lose_their_comment_lines() {
        let template = "-- what it does\nSELECT a -- b\n  -- inside\nFROM \"{table}\"\n";
        let table = TableName::new("locks").expect("a valid table name");
        let text = statement(template, &table, "");
        assert_eq!(text.as_str(), "SELECT a -- b\nFROM \"locks\"");
    }
}
