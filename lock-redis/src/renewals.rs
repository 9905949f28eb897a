//! The renewals of a master's holds, gathered: pipelined renew scripts, one round trip per batch.

use std::sync::Arc;
use std::time::Duration;

use lock_core::backend::Gather;
use lock_core::{Error, ErrorKind, Result};
use redis::aio::MultiplexedConnection;
use redis::{RedisResult, ServerErrorKind};

use crate::connection::Connection;
use crate::error::BACKEND;
use crate::invocation::{RENEW, millis};
use crate::link::Link;
use crate::script_call::ScriptCall;

/// One hold's renewal: its lock key, owner token, and the lease in ms.
#[derive(Debug)]
pub(crate) struct Renewal {
    pub(crate) key: String,
    pub(crate) token: String,
    pub(crate) lease_ms: u64,
}

/// The master's gathered renewals, shared by the clones of its node.
pub(crate) type Renewals = Arc<Gather<Renewal, Result<bool>>>;

pub(crate) fn renewals() -> Renewals {
    Arc::new(Gather::renewals())
}

/// Runs the renew script for every renewal in one round trip on a single server (a pipeline),
/// one script call after another on a cluster (whose pipeline could not span slots): `true`
/// for each hold extended, `false` for each no longer ours.
pub(crate) async fn renew_all(link: Link, batch: Vec<Renewal>) -> Vec<Result<bool>> {
    let count = batch.len();
    let link_name = link.name().to_owned();
    let replies = link
        .run(|connection| async move { run_scripts(connection, &batch).await })
        .await;
    match replies {
        Ok(replies) if replies.len() == count => {
            replies.into_iter().map(|reply| Ok(reply == 1)).collect()
        }
        Ok(_) => (0..count).map(|_| Err(short_reply())).collect(),
        Err(error) => {
            let (kind, message) = (error.kind(), error.message().to_owned());
            let each = || {
                Error::new(kind, message.clone())
                    .with_backend(BACKEND)
                    .with_server(link_name.clone())
            };
            (0..count).map(|_| Err(each())).collect()
        }
    }
}

async fn run_scripts(mut connection: Connection, batch: &[Renewal]) -> RedisResult<Vec<i64>> {
    if let Connection::Server(server) = &connection {
        match run_pipelined(server, batch).await {
            Err(error) if error.kind() == redis::ErrorKind::Server(ServerErrorKind::NoScript) => {
                // The server lost its scripts (a restart, SCRIPT FLUSH): load, then run again
                // (renewing twice is harmless).
                RENEW.load_async(&mut server.clone()).await?;
                return run_pipelined(server, batch).await;
            }
            replies => return replies,
        }
    }
    let mut replies = Vec::with_capacity(batch.len());
    for renewal in batch {
        let mut invocation = ScriptCall::new(&RENEW, 1);
        invocation
            .key(&renewal.key)
            .arg(&renewal.token)
            .arg(renewal.lease_ms);
        replies.push(invocation.invoke_async(&mut connection).await?);
    }
    Ok(replies)
}

/// Renew scripts per pipeline. A connection's write buffer keeps the size of the largest
/// pipeline it ever wrote (about 110 bytes a renewal), so one pipeline for 100,000 holds would
/// leave 11 MB on it; pipelines of this many leave some 30 KB.
const PIPELINE_LENGTH: usize = 256;

/// The batch as consecutive pipelines of at most [`PIPELINE_LENGTH`] scripts, all written
/// before any answer is awaited: still one round trip, since the server answers them in order
/// as one stream.
async fn run_pipelined(server: &MultiplexedConnection, batch: &[Renewal]) -> RedisResult<Vec<i64>> {
    let pipelines = batch.chunks(PIPELINE_LENGTH).map(|chunk| {
        let mut pipeline = redis::pipe();
        for renewal in chunk {
            pipeline
                .cmd("EVALSHA")
                .arg(RENEW.get_hash())
                .arg(1)
                .arg(&renewal.key)
                .arg(&renewal.token)
                .arg(renewal.lease_ms);
        }
        let mut server = server.clone();
        async move { pipeline.query_async::<Vec<i64>>(&mut server).await }
    });
    let replies = futures_util::future::try_join_all(pipelines).await?;
    Ok(replies.into_iter().flatten().collect())
}

fn short_reply() -> Error {
    Error::new(
        ErrorKind::Backend,
        "the renewal pipeline answered fewer replies than it carried",
    )
    .with_backend(BACKEND)
}

/// The renewal of the hold at `key` by `token` for `lease`, run with its batch.
pub(crate) fn renewal(key: &str, token: &str, lease: Duration) -> Renewal {
    Renewal {
        key: key.to_owned(),
        token: token.to_owned(),
        lease_ms: millis(lease),
    }
}
