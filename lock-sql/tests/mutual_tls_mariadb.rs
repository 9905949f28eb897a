//! MariaDB accounts that demand a client certificate (`REQUIRE X509`, `REQUIRE SUBJECT`): with
//! the certificate and key in the URL (`tls_cert`, `tls_key`) they take and release locks;
//! without them the connection is refused within the connect timeout, and the error says why.
//! MariaDB asks for client certificates per account, so the server itself takes any TLS client.

mod support;

use lock_core::{DistributedLockExt, ErrorKind};
use lock_sql::SqlLock;
use lock_testkit::servers::MariaDbServer;
use support::accounts;
use support::tls::{TlsServer, refused_in_time};

const VERIFY: &str = "ssl-mode=verify_identity";

/// Each account and its `REQUIRE` clause: any certificate from the trusted authority, and one
/// with the test client's subject.
const ACCOUNTS: [(&str, &str); 2] = [
    ("distlock_x509", "X509"),
    ("distlock_subject", "SUBJECT '/CN=distlock-client'"),
];

/// The server, with the lock tables and the accounts made by its administrator.
async fn server() -> Option<&'static TlsServer<MariaDbServer>> {
    static SERVER: tokio::sync::OnceCell<Option<TlsServer<MariaDbServer>>> =
        tokio::sync::OnceCell::const_new();
    SERVER
        .get_or_init(|| async {
            let tls = TlsServer::start(MariaDbServer::start_tls, MariaDbServer::url, false)?;
            let admin = format!("{}?ssl-mode=required", tls.base);
            accounts::create_tables(&admin).await;
            for (user, require) in ACCOUNTS {
                accounts::mariadb_user(&admin, user, require, &accounts::needed()).await;
            }
            Some(tls)
        })
        .await
        .as_ref()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accounts_requiring_a_client_certificate_lock_with_one() {
    let Some(tls) = server().await else { return };
    for (user, _) in ACCOUNTS {
        let url = tls.client_url(&accounts::as_user(&tls.base, user), VERIFY, true);
        let lock = SqlLock::builder(&url)
            .connect()
            .await
            .unwrap_or_else(|e| panic!("{user} with its certificate: {e}"));
        let guard = lock
            .try_acquire(format!("mutual-tls/{user}"))
            .await
            .expect("try_acquire")
            .expect("the lock is free");
        guard.release().await.expect("release");
    }
}

/// MariaDB answers a missing certificate with the "Access denied" of a wrong password: the
/// error names the client certificate among the causes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accounts_requiring_a_client_certificate_are_refused_without_one() {
    let Some(tls) = server().await else { return };
    for (user, _) in ACCOUNTS {
        let url = tls.client_url(&accounts::as_user(&tls.base, user), VERIFY, false);
        let error = refused_in_time(&url).await;
        assert_eq!(error.kind(), ErrorKind::Backend, "{user}: {error}");
        let shown = error.to_string();
        assert!(shown.contains("Access denied"), "{user}: {shown}");
        assert!(shown.contains("tls_cert"), "{user}: {shown}");
    }
}
