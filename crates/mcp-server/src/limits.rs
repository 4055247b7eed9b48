//! The server core's own bounds on what clients may hold (issue #11; every limit of the
//! workspace is listed in `docs/RELIABILITY.md`): how many `subscriptions/listen` streams
//! one principal keeps open, and how long a synchronous tool call may run.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use mcp_jsonrpc::ErrorObject;

/// The server core's limits, set with [`ServerBuilder::limits`](crate::ServerBuilder::limits).
///
/// ```
/// use std::time::Duration;
/// use mcp_server::{Limits, Server};
///
/// let server = Server::builder("bounded", "1.0.0")
///     .limits(Limits::default().listen_streams(4).tool_timeout(Some(Duration::from_secs(30))))
///     .build()
///     .unwrap();
/// # let _ = server;
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// The most `subscriptions/listen` streams one principal keeps open at once (default
    /// 16). Requests without an authenticated principal are counted together, under
    /// [`anonymous_listen_streams`](Self::anonymous_listen_streams). Past it, the
    /// next `subscriptions/listen` is answered with -32603 at once, and the count goes
    /// down as streams end (`docs/2026-07-28/basic/patterns/subscriptions.mdx`). A listen
    /// stream holds one of the connection's concurrency slots for its whole life (64 per
    /// stdio connection, 1024 per HTTP server by default), so without this bound one
    /// client could hold them all.
    pub listen_streams_per_principal: usize,
    /// The most `subscriptions/listen` streams open at once for all requests without an
    /// authenticated principal together (default 256): a server without authorization
    /// cannot tell its clients apart, so they share one count, large enough for many
    /// clients and still well below the HTTP server's 1024 concurrency slots.
    pub anonymous_listen_streams: usize,
    /// How long a synchronous `tools/call` may run (default 10 minutes; `None`: no
    /// bound). Past it the handler is dropped, which cancels it, and the call answers a
    /// `CallToolResult` with `isError` saying so, for the model to read
    /// (`docs/2026-07-28/server/tools.mdx`, Error Handling). Calls that become tasks are
    /// bounded by the task's own lifetime instead. The timer is armed only when the
    /// handler does not finish on its first poll, and then needs a tokio runtime with
    /// time enabled (`enable_time` or `enable_all`), as the server's other timers do.
    pub tool_timeout: Option<Duration>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            listen_streams_per_principal: 16,
            anonymous_listen_streams: 256,
            tool_timeout: Some(Duration::from_mins(10)),
        }
    }
}

impl Limits {
    /// Sets [`listen_streams_per_principal`](Self::listen_streams_per_principal) (at
    /// least 1).
    #[must_use]
    pub fn listen_streams(mut self, streams: usize) -> Self {
        self.listen_streams_per_principal = streams.max(1);
        self
    }

    /// Sets [`anonymous_listen_streams`](Self::anonymous_listen_streams) (at least 1).
    #[must_use]
    pub fn anonymous_listen_streams(mut self, streams: usize) -> Self {
        self.anonymous_listen_streams = streams.max(1);
        self
    }

    /// Sets [`tool_timeout`](Self::tool_timeout).
    #[must_use]
    pub fn tool_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.tool_timeout = timeout;
        self
    }
}

/// The open listen streams of each principal. An entry exists only while its count is
/// above zero, so the table holds at most one entry per open stream.
#[derive(Debug, Default)]
pub(crate) struct ListenStreams {
    open: Arc<Mutex<HashMap<Box<str>, usize>>>,
}

impl ListenStreams {
    /// Counts one more stream for `principal` (`""` for requests without one), or refuses
    /// it when the principal already holds `limit`.
    pub(crate) fn open(&self, principal: &str, limit: usize) -> Result<ListenGuard, ErrorObject> {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        let count = open.entry(principal.into()).or_insert(0);
        if *count >= limit {
            return Err(ErrorObject::internal(format!(
                "too many open listen streams (limit {limit}); close one first"
            )));
        }
        *count += 1;
        Ok(ListenGuard {
            open: Arc::clone(&self.open),
            principal: principal.into(),
        })
    }

    /// How many streams `principal` holds.
    #[cfg(test)]
    fn count(&self, principal: &str) -> usize {
        let open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        open.get(principal).copied().unwrap_or(0)
    }
}

/// One open listen stream; dropping it (the stream ended, however) gives its place back.
#[derive(Debug)]
pub(crate) struct ListenGuard {
    open: Arc<Mutex<HashMap<Box<str>, usize>>>,
    principal: Box<str>,
}

impl Drop for ListenGuard {
    fn drop(&mut self) {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(count) = open.get_mut(&self.principal) {
            *count -= 1;
            if *count == 0 {
                open.remove(&self.principal);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ListenStreams;

    #[test]
    fn streams_are_counted_per_principal_and_given_back() {
        let streams = ListenStreams::default();
        let a1 = streams.open("a", 2).unwrap();
        let a2 = streams.open("a", 2).unwrap();
        assert!(streams.open("a", 2).is_err(), "past the limit");
        let b = streams.open("b", 2).unwrap();
        assert_eq!(streams.count("a"), 2);
        drop(a1);
        let a3 = streams.open("a", 2).unwrap();
        drop((a2, a3, b));
        assert_eq!(streams.count("a"), 0);
        assert!(
            streams.open.lock().unwrap().is_empty(),
            "no entry outlives its streams"
        );
    }
}
