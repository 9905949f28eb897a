//! Our lock node: the protected create, finding it again after an ambiguous create, and deleting
//! every node an acquisition may have left.

use lock_core::{Error, ErrorKind, Result};
use tokio::time::Instant;
use zookeeper_client::{self as zk, Acls, CreateMode};

use crate::errors::{BACKEND, RETRY_PAUSE, convert, is_connection_loss, within};
use crate::session::Session;

/// How many requests a create may spend on vanished parents and lost connections before
/// giving up.
const CREATE_ATTEMPTS: u32 = 10;

/// Creates `<parent>/<prefix><marker><seq>` (ephemeral sequential; the marker is `lock-` for
/// the mutex, see [`Recipe`](crate::recipe::Recipe)) holding `data` (the owner
/// label, see [`label`](crate::label)), creating missing parents as container nodes, and
/// returns its path and creation zxid. A lost connection at any step is ridden out: after one
/// during the create, looks for a node with `prefix` before creating again (Curator's
/// protection), and creates again only once the parent's listing shows none: an unanswered
/// listing is asked again, never taken as "absent", so no second node is ever made for one
/// acquisition.
pub(crate) async fn create(
    session: &Session,
    parent: &str,
    prefix: &str,
    marker: &str,
    data: &[u8],
) -> Result<(String, i64)> {
    let (created, _) = create_then_list(session, parent, prefix, marker, data, false).await?;
    Ok(created)
}

/// The parent's children as a listing sent right behind our create answered them, and when
/// that listing was sent.
pub(crate) type Listed = (Instant, std::result::Result<Vec<String>, zk::Error>);

/// [`create`], and with `list` the parent's listing sent in the same breath: ZooKeeper runs a
/// session's requests in the order sent, so the listing answers after the create took effect
/// and shows our node, at the cost of one round trip for both. The listing comes back only
/// when the first create succeeds; after any retry the caller lists by itself.
pub(crate) async fn create_then_list(
    session: &Session,
    parent: &str,
    prefix: &str,
    marker: &str,
    data: &[u8],
    list: bool,
) -> Result<((String, i64), Option<Listed>)> {
    let settings = session.config();
    let acl = settings.acl.entries();
    let options = CreateMode::EphemeralSequential.with_acls(Acls::new(&acl));
    let mut base = String::with_capacity(parent.len() + prefix.len() + marker.len() + 11);
    for part in [parent, "/", prefix, marker] {
        base.push_str(part);
    }
    let client = session.client();
    let limit = session.operation_timeout();
    // Whether a create was sent whose outcome is unknown: look before creating again.
    let mut maybe_created = false;
    for attempt in 0..CREATE_ATTEMPTS {
        if maybe_created {
            match find(session, parent, prefix).await {
                Ok(Some(found)) => return Ok((found, None)),
                Ok(None) => maybe_created = false,
                Err(Unknown::ConnectionLost(_)) => {
                    tokio::time::sleep(RETRY_PAUSE).await;
                    continue;
                }
                Err(Unknown::Failed(error)) => return Err(error),
            }
        }
        let sent = Instant::now();
        // Both requests leave now, in this order; the listing's answer is dropped unread
        // unless the create succeeds.
        let creating = client.create(&base, data, &options);
        let listing = (list && attempt == 0).then(|| client.list_children(parent));
        match within(limit, "acquire", creating).await? {
            Ok((stat, sequence)) => {
                let created = (format!("{base}{sequence}"), stat.czxid);
                let listed = match listing {
                    Some(listing) => Some((sent, within(limit, "acquire", listing).await?)),
                    None => None,
                };
                return Ok((created, listed));
            }
            Err(zk::Error::NoNode) => make_parents(session, parent).await?,
            Err(error) if is_connection_loss(&error) => {
                maybe_created = true;
                tokio::time::sleep(RETRY_PAUSE).await;
            }
            Err(error) => return Err(convert(error, "acquire")),
        }
    }
    Err(Error::new(
        ErrorKind::Unavailable,
        format!(
            "no lock node after {CREATE_ATTEMPTS} tries: the connection kept breaking or the \
             lock's parent kept vanishing"
        ),
    )
    .with_backend(BACKEND))
}

/// Why a look-up has no answer.
enum Unknown {
    /// The connection broke before the answer came: ask again.
    ConnectionLost(zk::Error),
    /// Any other failure, already converted.
    Failed(Error),
}

impl From<Error> for Unknown {
    fn from(error: Error) -> Self {
        Unknown::Failed(error)
    }
}

impl From<Unknown> for Error {
    fn from(unknown: Unknown) -> Self {
        match unknown {
            Unknown::ConnectionLost(error) => outcome_unknown(error),
            Unknown::Failed(error) => error,
        }
    }
}

/// Creates the lock's parent (and missing ancestors) as container nodes, which ZooKeeper
/// deletes once their last child is gone. A lost connection is not an error here: the create
/// that follows finds out whether the parent exists.
async fn make_parents(session: &Session, parent: &str) -> Result<()> {
    let acl = session.config().acl.entries();
    let options = CreateMode::Container.with_acls(Acls::new(&acl));
    let made = session.client().mkdir(parent, &options);
    match within(session.operation_timeout(), "acquire", made).await? {
        Ok(()) => Ok(()),
        Err(error) if is_connection_loss(&error) => {
            tokio::time::sleep(RETRY_PAUSE).await;
            Ok(())
        }
        Err(error) => Err(convert(error, "acquire")),
    }
}

/// The nodes under `parent` whose names start with `prefix`: `Ok(vec![])` only when the
/// listing shows none; a listing that got no answer is an error.
async fn children_with(
    session: &Session,
    parent: &str,
    prefix: &str,
) -> std::result::Result<Vec<String>, Unknown> {
    let listed = within(
        session.operation_timeout(),
        "acquire",
        session.client().list_children(parent),
    )
    .await?;
    match listed {
        Ok(children) => Ok(children
            .into_iter()
            .filter(|child| child.starts_with(prefix))
            .map(|child| format!("{parent}/{child}"))
            .collect()),
        Err(zk::Error::NoNode) => Ok(Vec::new()),
        Err(error) if is_connection_loss(&error) => Err(Unknown::ConnectionLost(error)),
        Err(error) => Err(Unknown::Failed(convert(error, "acquire"))),
    }
}

/// Our node after an ambiguous create, with its creation zxid; `None` when the parent's listing
/// shows no node of ours.
async fn find(
    session: &Session,
    parent: &str,
    prefix: &str,
) -> std::result::Result<Option<(String, i64)>, Unknown> {
    for path in children_with(session, parent, prefix).await? {
        let stat = within(
            session.operation_timeout(),
            "acquire",
            session.client().check_stat(&path),
        )
        .await?;
        match stat {
            Ok(Some(stat)) => return Ok(Some((path, stat.czxid))),
            Ok(None) => {}
            Err(error) if is_connection_loss(&error) => return Err(Unknown::ConnectionLost(error)),
            Err(error) => return Err(Unknown::Failed(convert(error, "acquire"))),
        }
    }
    Ok(None)
}

/// Deletes `path` if it exists: `Ok` once it is known to be gone.
pub(crate) async fn delete(session: &Session, path: &str) -> Result<()> {
    let deleted = within(
        session.operation_timeout(),
        "cleanup",
        session.client().delete(path, None),
    )
    .await?;
    match deleted {
        Ok(()) | Err(zk::Error::NoNode) => Ok(()),
        Err(error) if is_connection_loss(&error) => Err(outcome_unknown(error)),
        Err(error) => Err(convert(error, "cleanup")),
    }
}

/// Deletes every node under `parent` whose name starts with `prefix`: the nodes of one
/// acquisition whose create was in flight when it was interrupted.
pub(crate) async fn delete_prefixed(session: &Session, parent: &str, prefix: &str) -> Result<()> {
    for path in children_with(session, parent, prefix).await? {
        delete(session, &path).await?;
    }
    Ok(())
}

/// The error for a request whose outcome is unknown (the connection broke): temporary.
fn outcome_unknown(error: zk::Error) -> Error {
    Error::new(
        ErrorKind::Unavailable,
        "the connection to ZooKeeper broke before it answered; the outcome is unknown",
    )
    .with_backend(BACKEND)
    .with_source(error)
}
