//! The signals lockrun catches while it runs a command, to pass them on to its group.

use rustix::process::Signal;
use tokio::signal::unix::{Signal as SignalStream, SignalKind, signal};

/// The signals lockrun passes on to the command.
pub(crate) struct Signals {
    terminate: SignalStream,
    interrupt: SignalStream,
    hangup: SignalStream,
}

impl Signals {
    /// Installs the handlers: from now on these signals no longer end lockrun.
    pub(crate) fn install() -> std::io::Result<Self> {
        Ok(Self {
            terminate: signal(SignalKind::terminate())?,
            interrupt: signal(SignalKind::interrupt())?,
            hangup: signal(SignalKind::hangup())?,
        })
    }

    /// The next signal received.
    pub(crate) async fn next(&mut self) -> Signal {
        tokio::select! {
            _ = self.terminate.recv() => Signal::TERM,
            _ = self.interrupt.recv() => Signal::INT,
            _ = self.hangup.recv() => Signal::HUP,
        }
    }
}
