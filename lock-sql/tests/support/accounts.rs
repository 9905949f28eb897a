//! Database accounts a test makes on its own server through the admin URL: a user holding
//! only the privileges lock-sql needs (the README's "Least privilege" section lists the same
//! statements), fewer than that, or one that must present a client certificate.

use lock_sql::{SqlLock, sqlx};
use lock_testkit::{ServerError, require};
use sqlx::Connection;

/// A server of a least-privilege binary: the lock tables made by its administrator, and a
/// user holding only what [`GRANTS`] lists.
pub(crate) struct Prepared<S> {
    _server: S,
    /// The administrator's URL.
    pub(crate) admin: String,
    /// The least-privileged user's URL.
    pub(crate) user: String,
}

/// Starts a server with `start`, creates the lock tables as its administrator (at `url`), and
/// then user `distlock_app` with the needed privileges; `None` skips.
pub(crate) async fn prepare<S>(
    start: impl FnOnce() -> Result<S, ServerError>,
    url: fn(&S) -> String,
) -> Option<Prepared<S>> {
    let server = require(start())?;
    let admin = url(&server);
    create_tables(&admin).await;
    let user = user(&admin, "distlock_app", &needed()).await;
    Some(Prepared {
        _server: server,
        admin,
        user,
    })
}

/// Creates user `name` holding `grants` on the lock tables of the server `admin_url` names,
/// PostgreSQL or MariaDB; returns the URL that logs in as `name`.
pub(crate) async fn user(admin_url: &str, name: &str, grants: &[(&str, String)]) -> String {
    if admin_url.starts_with("postgres") {
        postgres_user(admin_url, name, grants).await
    } else {
        mariadb_user(admin_url, name, "NONE", grants).await
    }
}

/// The tables of the default lock table name, with what the lock service does to each:
/// read, insert and update grants, and delete the waiter entries of acquisitions that stopped
/// waiting.
pub(crate) const GRANTS: [(&str, &str); 3] = [
    ("distlock_locks", "SELECT, INSERT, UPDATE"),
    ("distlock_locks_waiters", "SELECT, INSERT, UPDATE, DELETE"),
    ("distlock_locks_claims", "SELECT, INSERT, UPDATE"),
];

/// Creates (or upgrades) the lock tables as the administrator: the set-up step that needs
/// `CREATE`, done once before any least-privileged user connects.
pub(crate) async fn create_tables(admin_url: &str) {
    let admin = SqlLock::builder(admin_url)
        .connect()
        .await
        .expect("the administrator creates the lock tables");
    drop(admin);
}

/// Runs `statements` on a single connection of type `C` to `admin_url`, then closes it.
async fn run<C>(admin_url: &str, statements: &[String])
where
    C: Connection,
    for<'c> &'c mut C: sqlx::Executor<'c, Database = C::Database>,
{
    let mut conn = C::connect(admin_url).await.expect("admin connection");
    for statement in statements {
        let sql = sqlx::AssertSqlSafe(statement.clone());
        sqlx::raw_sql(sql)
            .execute(&mut conn)
            .await
            .unwrap_or_else(|e| panic!("{statement}: {e}"));
    }
    conn.close().await.expect("close the admin connection");
}

/// Creates PostgreSQL role `user` (no password: the test server trusts loopback) holding
/// `grants` on the lock tables and nothing else; returns `admin_url` logged in as `user`.
pub(crate) async fn postgres_user(
    admin_url: &str,
    user: &str,
    grants: &[(&str, String)],
) -> String {
    let mut statements = vec![
        format!("CREATE ROLE {user} LOGIN"),
        // PUBLIC holds both already on a new cluster; granted by name so the set-up works
        // where an administrator revoked them from PUBLIC.
        format!("GRANT CONNECT ON DATABASE postgres TO {user}"),
        format!("GRANT USAGE ON SCHEMA public TO {user}"),
    ];
    statements.extend(
        grants
            .iter()
            .map(|(table, privileges)| format!("GRANT {privileges} ON {table} TO {user}")),
    );
    run::<sqlx::PgConnection>(admin_url, &statements).await;
    as_user(admin_url, user)
}

/// Creates MariaDB account `user@127.0.0.1` with the `REQUIRE` clause `require` (`NONE`,
/// `X509`, `SUBJECT '...'`) holding `grants` on the lock tables of database `distlock` and
/// nothing else; returns `admin_url` logged in as `user`.
pub(crate) async fn mariadb_user(
    admin_url: &str,
    user: &str,
    require: &str,
    grants: &[(&str, String)],
) -> String {
    let account = format!("'{user}'@'127.0.0.1'");
    let mut statements = vec![format!("CREATE USER {account} REQUIRE {require}")];
    statements.extend(
        grants.iter().map(|(table, privileges)| {
            format!("GRANT {privileges} ON distlock.{table} TO {account}")
        }),
    );
    run::<sqlx::MySqlConnection>(admin_url, &statements).await;
    as_user(admin_url, user)
}

/// `url` logged in as `user` (no password): its user part replaced.
pub(crate) fn as_user(url: &str, user: &str) -> String {
    let (scheme, rest) = url.split_once("://").expect("a server URL");
    let host = rest.split_once('@').map_or(rest, |(_, host)| host);
    format!("{scheme}://{user}@{host}")
}

/// Every privilege in [`GRANTS`].
pub(crate) fn needed() -> Vec<(&'static str, String)> {
    grants_without("", "")
}

/// [`GRANTS`] with `privilege` taken away from `table`: one needed privilege missing.
pub(crate) fn grants_without(table: &str, privilege: &str) -> Vec<(&'static str, String)> {
    GRANTS
        .iter()
        .map(|(name, privileges)| {
            let kept = privileges
                .split(", ")
                .filter(|p| *name != table || *p != privilege)
                .collect::<Vec<_>>()
                .join(", ");
            (*name, kept)
        })
        .collect()
}

/// Creates a user holding every needed privilege but `privilege` on `table`: its `connect()`
/// must refuse, before any lock is granted, with an error that names both.
pub(crate) async fn assert_refused_without(admin_url: &str, table: &str, privilege: &str) {
    let name = format!("distlock_no_{}", privilege.to_lowercase());
    let url = user(admin_url, &name, &grants_without(table, privilege)).await;
    let error = SqlLock::builder(&url)
        .connect()
        .await
        .expect_err("a user missing a needed privilege connected");
    let text = format!("{error}: {:?}", std::error::Error::source(&error));
    assert_eq!(error.kind(), lock_core::ErrorKind::Backend, "{text}");
    let named = format!("lacks the {privilege} privilege on table {table}");
    assert!(
        text.contains(&named),
        "the error does not say it {named}: {text}"
    );
}
