//! The subscriber's connection: plain `SUBSCRIBE` on one server, or sharded `SSUBSCRIBE`
//! through a cluster client (RESP3 pushes), which sends each subscription to the master that
//! owns the channel's slot.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use redis::aio::{PubSubSink, PubSubStream};
use redis::cluster_async::ClusterConnection;
use redis::{ProtocolVersion, PushInfo, PushKind, RedisError, RedisResult, Value};
use tokio::sync::mpsc;

use crate::source::{Server, Source};

/// What the connection delivered.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Event {
    /// A message on a channel: the token of the waiter the release names (may be empty).
    Message { channel: String, next: Arc<str> },
    /// The server ended a subscription the client did not end (a cluster slot moved to
    /// another master): subscribe again if anyone still waits.
    Dropped { channel: String },
    /// The connection ended (or one of a cluster's node connections did).
    Closed,
}

/// An open subscriber connection.
pub(crate) enum PubSub {
    Plain(PubSubSink, PubSubStream),
    Sharded {
        connection: ClusterConnection,
        pushes: mpsc::UnboundedReceiver<PushInfo>,
    },
}

impl PubSub {
    /// Opens the subscriber connection of `server` within `limit`.
    pub(crate) async fn open(server: &Server, limit: Duration) -> RedisResult<Self> {
        Box::pin(Self::open_unboxed(server, limit)).await
    }

    async fn open_unboxed(server: &Server, limit: Duration) -> RedisResult<Self> {
        if let Source::Cluster(seeds) = &server.source {
            let (sender, pushes) = mpsc::unbounded_channel();
            let client = seeds
                .builder(limit)
                .use_protocol(ProtocolVersion::RESP3)
                .push_sender(sender)
                .build()?;
            let connection = client.get_async_connection().await?;
            return Ok(Self::Sharded { connection, pushes });
        }
        let client = server
            .client(limit)
            .await
            .map_err(|error| RedisError::from(std::io::Error::other(error.to_string())))?;
        let Some(client) = client else {
            return Err(RedisError::from(std::io::Error::other(
                "no server to subscribe on",
            )));
        };
        let (sink, stream) = client.get_async_pubsub().await?.split();
        Ok(Self::Plain(sink, stream))
    }

    pub(crate) async fn subscribe(&mut self, channel: &str) -> RedisResult<()> {
        match self {
            Self::Plain(sink, _) => sink.subscribe(channel).await,
            Self::Sharded { connection, .. } => connection.ssubscribe(channel).await,
        }
    }

    pub(crate) async fn unsubscribe(&mut self, channel: &str) -> RedisResult<()> {
        match self {
            Self::Plain(sink, _) => sink.unsubscribe(channel).await,
            Self::Sharded { connection, .. } => connection.sunsubscribe(channel).await,
        }
    }

    /// The next event; confirmations of the client's own (un)subscriptions are skipped.
    pub(crate) async fn next(&mut self) -> Event {
        match self {
            Self::Plain(_, stream) => match stream.next().await {
                Some(message) => Event::Message {
                    channel: message.get_channel_name().to_owned(),
                    next: Arc::from(message.get_payload::<String>().unwrap_or_default()),
                },
                None => Event::Closed,
            },
            Self::Sharded { pushes, .. } => loop {
                let Some(push) = pushes.recv().await else {
                    return Event::Closed;
                };
                if let Some(event) = read_push(push) {
                    return event;
                }
            },
        }
    }
}

/// The event a RESP3 push means, if any.
fn read_push(push: PushInfo) -> Option<Event> {
    let text = |value: &Value| redis::from_redis_value_ref::<String>(value).ok();
    match push.kind {
        PushKind::SMessage | PushKind::Message => Some(Event::Message {
            channel: text(push.data.first()?)?,
            next: Arc::from(push.data.get(1).and_then(text).unwrap_or_default()),
        }),
        PushKind::SUnsubscribe => Some(Event::Dropped {
            channel: text(push.data.first()?)?,
        }),
        PushKind::Disconnection => Some(Event::Closed),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn push(kind: PushKind, data: &[&str]) -> PushInfo {
        let data = data
            .iter()
            .map(|text| Value::BulkString(text.as_bytes().to_vec()))
            .collect();
        PushInfo { kind, data }
    }

    #[test]
    fn pushes_become_messages_dropped_subscriptions_and_closes() {
        assert_eq!(
            read_push(push(PushKind::SMessage, &["{p:n}:released", "tok"])),
            Some(Event::Message {
                channel: "{p:n}:released".to_owned(),
                next: Arc::from("tok"),
            })
        );
        assert_eq!(
            read_push(push(PushKind::SUnsubscribe, &["{p:n}:released"])),
            Some(Event::Dropped {
                channel: "{p:n}:released".to_owned()
            })
        );
        assert_eq!(
            read_push(push(PushKind::Disconnection, &[])),
            Some(Event::Closed)
        );
        assert_eq!(read_push(push(PushKind::SSubscribe, &["c"])), None);
    }
}
