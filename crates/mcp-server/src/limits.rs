//! The server core's own bounds on what clients may hold (every limit of the
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
    /// down as streams end (<https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions>). A listen
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
    /// (<https://modelcontextprotocol.io/specification/2026-07-28/server/tools>, Error Handling). Calls that become tasks are
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

/// Whose count a listen stream is held against: an authenticated principal, by its id, or
/// every request without one, together. The two never share a count, whatever a principal's
/// id is (an authenticator may well hand out an empty one).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum ListenOwner {
    /// Requests without an authenticated principal (stdio, HTTP without authorization).
    Anonymous,
    /// An authenticated principal, by its id.
    Principal(Box<str>),
}

/// The open listen streams of each owner. An entry exists only while its count is above
/// zero, so the table holds at most one entry per open stream.
#[derive(Debug, Default)]
pub(crate) struct ListenStreams {
    open: Arc<Mutex<HashMap<ListenOwner, usize>>>,
}

impl ListenStreams {
    /// Counts one more stream for `owner`, or refuses it when the owner already holds
    /// `limit`.
    pub(crate) fn open(
        &self,
        owner: ListenOwner,
        limit: usize,
    ) -> Result<ListenGuard, ErrorObject> {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        let count = open.entry(owner.clone()).or_insert(0);
        if *count >= limit {
            // `or_insert` may just have made the entry: keep none at zero.
            if *count == 0 {
                open.remove(&owner);
            }
            return Err(ErrorObject::internal(format!(
                "too many open listen streams (limit {limit}); close one first"
            )));
        }
        *count += 1;
        Ok(ListenGuard {
            open: Arc::clone(&self.open),
            owner,
        })
    }

    /// How many streams `owner` holds.
    #[cfg(test)]
    fn count(&self, owner: &ListenOwner) -> usize {
        let open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        open.get(owner).copied().unwrap_or(0)
    }
}

/// One open listen stream; dropping it (the stream ended, however) gives its place back.
#[derive(Debug)]
pub(crate) struct ListenGuard {
    open: Arc<Mutex<HashMap<ListenOwner, usize>>>,
    owner: ListenOwner,
}

impl Drop for ListenGuard {
    fn drop(&mut self) {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(count) = open.get_mut(&self.owner) {
            *count -= 1;
            if *count == 0 {
                open.remove(&self.owner);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{ListenOwner, ListenStreams};

    fn principal(id: &str) -> ListenOwner {
        ListenOwner::Principal(id.into())
    }

    #[test]
    fn streams_are_counted_per_principal_and_given_back() {
        let streams = ListenStreams::default();
        let a1 = streams.open(principal("a"), 2).unwrap();
        let a2 = streams.open(principal("a"), 2).unwrap();
        assert!(streams.open(principal("a"), 2).is_err(), "past the limit");
        let b = streams.open(principal("b"), 2).unwrap();
        assert_eq!(streams.count(&principal("a")), 2);
        drop(a1);
        let a3 = streams.open(principal("a"), 2).unwrap();
        drop((a2, a3, b));
        assert_eq!(streams.count(&principal("a")), 0);
        assert!(
            streams.open.lock().unwrap().is_empty(),
            "no entry outlives its streams"
        );
    }

    #[test]
    fn a_principal_with_an_empty_id_is_not_the_anonymous_count() {
        let streams = ListenStreams::default();
        let anonymous: Vec<_> = (0..2)
            .map(|_| streams.open(ListenOwner::Anonymous, 2).unwrap())
            .collect();
        assert!(
            streams.open(ListenOwner::Anonymous, 2).is_err(),
            "the anonymous count is full"
        );
        // A principal whose id is "" has a count of its own, full or not.
        let empty = streams.open(principal(""), 1).unwrap();
        assert!(streams.open(principal(""), 1).is_err());
        assert_eq!(streams.count(&principal("")), 1);
        assert_eq!(streams.count(&ListenOwner::Anonymous), 2);
        drop(anonymous);
        assert_eq!(streams.count(&principal("")), 1);
        drop(empty);
        assert!(streams.open.lock().unwrap().is_empty());
    }

    #[test]
    fn a_refused_stream_leaves_no_entry() {
        let streams = ListenStreams::default();
        assert!(streams.open(principal("a"), 0).is_err());
        assert!(streams.open.lock().unwrap().is_empty());
    }
}
