//! One call of a lock script: the `EVALSHA` command written as its keys and arguments are
//! given, with no buffer per argument (an acquisition and a release each send one), and the
//! script loaded and the command sent again when the server does not have it.

use redis::{Cmd, ErrorKind, FromRedisValue, RedisResult, Script, ServerErrorKind, ToRedisArgs};

/// `EVALSHA` of one script with its keys and arguments, ready to send (again, after a
/// reconnection: sending leaves it as it is).
#[derive(Clone, Debug)]
pub(crate) struct ScriptCall {
    script: &'static Script,
    command: Cmd,
    /// Keys still to come before the first argument.
    keys_left: usize,
}

impl ScriptCall {
    /// A call of `script` that will be given `keys` keys, then its arguments.
    pub(crate) fn new(script: &'static Script, keys: usize) -> Self {
        let mut command = Cmd::with_capacity(3 + keys + 8, 64 + 48 * keys);
        command.arg("EVALSHA").arg(script.get_hash()).arg(keys);
        Self {
            script,
            command,
            keys_left: keys,
        }
    }

    /// Adds the next key (`KEYS[i]` in the script).
    pub(crate) fn key(&mut self, key: impl ToRedisArgs) -> &mut Self {
        debug_assert!(self.keys_left > 0, "more keys than the call declared");
        self.keys_left = self.keys_left.saturating_sub(1);
        self.command.arg(key);
        self
    }

    /// Adds the next argument (`ARGV[i]`); every key comes first.
    pub(crate) fn arg(&mut self, arg: impl ToRedisArgs) -> &mut Self {
        debug_assert_eq!(self.keys_left, 0, "an argument before the declared keys");
        self.command.arg(arg);
        self
    }

    /// Sends the call on `connection`; when the server does not have the script (`NOSCRIPT`:
    /// restarted, flushed, or a failover), loads it and sends the call once more.
    ///
    /// # Cancel safety
    ///
    /// Not cancel safe: dropped after sending, the script may still run on the server.
    ///
    /// # Errors
    ///
    /// The connection's errors, the script's own (`redis.error_reply`), and a reply `T`
    /// cannot be read from.
    pub(crate) async fn invoke_async<T: FromRedisValue>(
        &self,
        connection: &mut impl redis::aio::ConnectionLike,
    ) -> RedisResult<T> {
        debug_assert_eq!(self.keys_left, 0, "fewer keys than the call declared");
        match self.command.query_async(connection).await {
            Err(error) if error.kind() == ErrorKind::Server(ServerErrorKind::NoScript) => {
                self.script.load_async(connection).await?;
                self.command.query_async(connection).await
            }
            result => result,
        }
    }
}

#[cfg(test)]
mod tests {
    use lock_core::LockName;

    use super::*;
    use crate::keys::LockKeys;

    /// The command's arguments, as Redis receives them.
    fn args(call: &ScriptCall) -> Vec<String> {
        call.command
            .args_iter()
            .filter_map(|arg| match arg {
                redis::Arg::Simple(bytes) => Some(String::from_utf8_lossy(bytes).into_owned()),
                _ => None,
            })
            .collect()
    }

    /// The script's hash, the key count, each key as one argument (the lock's other keys are
    /// its tag and a suffix), then the arguments.
    #[test]
    fn a_call_is_evalsha_with_its_keys_then_its_arguments() {
        static SCRIPT: std::sync::LazyLock<Script> =
            std::sync::LazyLock::new(|| Script::new("return KEYS[2]"));
        let name = LockName::new("jobs/nightly").expect("valid name");
        let keys = LockKeys::new("distlock", &name);
        let mut call = ScriptCall::new(&SCRIPT, 2);
        call.key(keys.lock())
            .key(keys.queue_terms())
            .arg("t")
            .arg(7);
        assert_eq!(
            args(&call),
            [
                "EVALSHA",
                SCRIPT.get_hash(),
                "2",
                "{distlock:jobs/nightly}",
                "{distlock:jobs/nightly}:queue:terms",
                "t",
                "7",
            ]
        );
    }
}
