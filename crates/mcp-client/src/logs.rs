//! Server log messages (`notifications/message`,
//! <https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/logging>).
//!
//! In 2026-07-28 a server sends log messages only for a request whose `_meta` carries
//! `io.modelcontextprotocol/logLevel` ([`ClientBuilder::log_level`]), on that request's
//! stream; in the initialize era (`mcp-legacy`) after `logging/setLevel`. Either way the
//! client hands each message to what the user registered on the [`ClientBuilder`]:
//!
//! - a callback ([`ClientBuilder::on_log`]), called on the connection's reading task, so it
//!   must be quick (a panic in it is caught and the message dropped);
//! - a bounded channel ([`ClientBuilder::log_channel`]) read through a [`LogReceiver`].
//!   When it is full the **newest** message is dropped and counted
//!   ([`LogReceiver::dropped`]): a slow consumer never grows memory.
//!
//! Messages that do not parse as `LoggingMessageNotificationParams` are dropped.
//!
//! [`ClientBuilder`]: crate::ClientBuilder
//! [`ClientBuilder::log_level`]: crate::ClientBuilder::log_level
//! [`ClientBuilder::on_log`]: crate::ClientBuilder::on_log
//! [`ClientBuilder::log_channel`]: crate::ClientBuilder::log_channel

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use mcp_types::LoggingMessageNotificationParams;
use tokio::sync::mpsc;

/// The capacity of a log channel when the caller asks for 0 or does not say
/// ([`ClientBuilder::log_channel`](crate::ClientBuilder::log_channel)).
pub const DEFAULT_LOG_BUFFER: usize = 256;

/// The largest capacity a log channel may have; a larger request is clamped to it.
pub const MAX_LOG_BUFFER: usize = 65_536;

type LogFn = Arc<dyn Fn(LoggingMessageNotificationParams) + Send + Sync>;

/// Where a client's log messages go: the user's callback and channel, either or both.
#[derive(Clone, Default)]
pub(crate) struct LogSink {
    pub(crate) handler: Option<LogFn>,
    pub(crate) channel: Option<(
        mpsc::Sender<LoggingMessageNotificationParams>,
        Arc<AtomicU64>,
    )>,
}

// A panic while delivering leaves nothing half-updated: the callback is run under
// `catch_unwind` already, and the channel and its counter are consistent at every step. So
// the types holding a sink (the router, subscriptions) stay unwind-safe, as they were.
impl std::panic::UnwindSafe for LogSink {}
impl std::panic::RefUnwindSafe for LogSink {}

impl std::fmt::Debug for LogSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogSink")
            .field("handler", &self.handler.is_some())
            .field("channel", &self.channel.is_some())
            .finish()
    }
}

impl LogSink {
    /// Whether anyone wants log messages.
    pub(crate) fn is_wanted(&self) -> bool {
        self.handler.is_some() || self.channel.is_some()
    }

    /// Hands `params` to the callback and the channel. `false` if the channel had no room
    /// (the message was dropped there and counted) or the callback panicked.
    pub(crate) fn deliver(&self, params: LoggingMessageNotificationParams) -> bool {
        let mut delivered = true;
        if let Some(handler) = &self.handler {
            let params = params.clone();
            let call = std::panic::AssertUnwindSafe(|| handler(params));
            if std::panic::catch_unwind(call).is_err() {
                tracing::warn!("the log handler panicked; the message was dropped");
                delivered = false;
            }
        }
        if let Some((tx, dropped)) = &self.channel
            && tx.try_send(params).is_err()
        {
            // Full or closed: the newest message is the one dropped.
            dropped.fetch_add(1, Ordering::Relaxed);
            delivered = false;
        }
        delivered
    }

    /// [`deliver`](Self::deliver) for params as JSON; ill-formed ones are dropped.
    pub(crate) fn deliver_json(&self, params: &serde_json::Value) -> bool {
        if !self.is_wanted() {
            return false;
        }
        if let Ok(params) =
            <LoggingMessageNotificationParams as serde::Deserialize>::deserialize(params)
        {
            return self.deliver(params);
        }
        tracing::debug!("an ill-formed log message was dropped");
        false
    }
}

/// The receiving end of a client's log channel
/// ([`ClientBuilder::log_channel`](crate::ClientBuilder::log_channel)).
#[derive(Debug)]
pub struct LogReceiver {
    pub(crate) rx: mpsc::Receiver<LoggingMessageNotificationParams>,
    pub(crate) dropped: Arc<AtomicU64>,
}

impl LogReceiver {
    /// The next log message; `None` once every client that could send one is gone.
    ///
    /// Cancel safety: cancel-safe.
    pub async fn recv(&mut self) -> Option<LoggingMessageNotificationParams> {
        self.rx.recv().await
    }

    /// The next log message if one is waiting.
    pub fn try_recv(&mut self) -> Option<LoggingMessageNotificationParams> {
        self.rx.try_recv().ok()
    }

    /// How many messages were dropped because the channel was full (the newest message
    /// is the one dropped).
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

/// A channel of `capacity` messages (0: [`DEFAULT_LOG_BUFFER`]; at most
/// [`MAX_LOG_BUFFER`]).
pub(crate) fn channel(
    capacity: usize,
) -> (
    (
        mpsc::Sender<LoggingMessageNotificationParams>,
        Arc<AtomicU64>,
    ),
    LogReceiver,
) {
    let capacity = match capacity {
        0 => DEFAULT_LOG_BUFFER,
        n => n.min(MAX_LOG_BUFFER),
    };
    let (tx, rx) = mpsc::channel(capacity);
    let dropped = Arc::new(AtomicU64::new(0));
    ((tx, Arc::clone(&dropped)), LogReceiver { rx, dropped })
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_types::LoggingLevel;

    fn message(n: u64) -> LoggingMessageNotificationParams {
        LoggingMessageNotificationParams::new(serde_json::json!(n), LoggingLevel::Info)
    }

    #[test]
    fn a_full_channel_drops_the_newest_and_counts_it() {
        let (channel, mut rx) = channel(3);
        let sink = LogSink {
            handler: None,
            channel: Some(channel),
        };
        // At the limit: all kept.
        for n in 0..3 {
            assert!(sink.deliver(message(n)));
        }
        assert_eq!(rx.dropped(), 0);
        // Past it: the newest is dropped and counted.
        assert!(!sink.deliver(message(3)));
        assert!(!sink.deliver(message(4)));
        assert_eq!(rx.dropped(), 2);
        let kept: Vec<_> = std::iter::from_fn(|| rx.try_recv())
            .map(|m| m.data)
            .collect();
        assert_eq!(kept, [0, 1, 2]);
        // Room again: delivered.
        assert!(sink.deliver(message(5)));
        assert_eq!(rx.try_recv().map(|m| m.data), Some(serde_json::json!(5)));
    }

    #[test]
    fn capacity_defaults_and_is_clamped() {
        let (channel_default, _rx) = channel(0);
        assert_eq!(channel_default.0.max_capacity(), DEFAULT_LOG_BUFFER);
        let (at_max, _rx) = channel(MAX_LOG_BUFFER);
        assert_eq!(at_max.0.max_capacity(), MAX_LOG_BUFFER);
        let (past_max, _rx) = channel(MAX_LOG_BUFFER + 1);
        assert_eq!(past_max.0.max_capacity(), MAX_LOG_BUFFER);
    }

    #[test]
    fn a_panicking_handler_and_bad_params_are_contained() {
        let sink = LogSink {
            handler: Some(Arc::new(|_| panic!("handler bug"))),
            channel: None,
        };
        assert!(!sink.deliver(message(1)));
        assert!(!sink.deliver_json(&serde_json::json!({"level": "nonsense"})));
    }
}
