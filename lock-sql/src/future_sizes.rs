//! The futures of an uncontended acquire and release stay small. Every statement's future is
//! boxed or moved on its way to the runtime, and a move copies the whole future: a rarely
//! taken branch that awaits a large future inline (sqlx's pool acquire is some 18 KB, opening
//! a connection some 8 KB) makes every try and every release copy that much.

use std::sync::Arc;
use std::time::Duration;

use lock_core::backend::{HeldLock, LockSteps};
use lock_core::{AcquireOptions, LockName};

use crate::SqlLock;
use crate::db::{Owner, Waiting};
use crate::held::SqlHeld;

/// Far above what the hot path needs (about 1.3 KB), far below what a large inline future
/// brings.
const AT_MOST: usize = 3 * 1024;

#[tokio::test]
async fn an_acquire_try_and_a_release_stay_small() {
    let lock = SqlLock::builder("sqlite::memory:").connect().await;
    let lock = lock.expect("an in-memory SQLite database opens");
    let steps = &lock.steps;
    let name = LockName::new("sizes").expect("a valid name");
    let options = AcquireOptions::default();
    let owner = Owner::random();
    let mut attempt = steps.begin(&name, &options);
    let held = SqlHeld {
        inner: Arc::clone(&steps.inner),
        name: name.clone(),
        owner,
    };
    let db = &steps.inner.db;
    let mut conn = db.connection().await.expect("a connection");
    let waiting = Waiting {
        id: owner,
        place: false,
        placed: false,
        sleeper: None,
        turn: false,
    };
    let lease = Duration::from_secs(1);
    let sizes = [
        ("a try", size_of_val(&*steps.try_once(&mut attempt))),
        ("a release", size_of_val(&*held.release())),
        ("a connection", size_of_val(&db.connection())),
        (
            "a statement",
            size_of_val(&db.acquire(&mut conn, "s", owner, lease, "l", waiting)),
        ),
    ];
    let large: Vec<_> = sizes.iter().filter(|(_, size)| *size > AT_MOST).collect();
    assert!(large.is_empty(), "futures over {AT_MOST} bytes: {large:?}");
}
