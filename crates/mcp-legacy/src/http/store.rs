//! Where the Streamable HTTP sessions of [`DualEraHttp`](super::DualEraHttp) live: the
//! [`SessionStore`] of [`LegacyHttpConfig::session_store`](super::LegacyHttpConfig::session_store).
//!
//! **In memory** ([`SessionStore::memory`], the default): a session, its streams and the
//! server-to-client requests it waits for live in the instance that created it, and end
//! with it. Behind a load balancer, a client must then come back to the same instance
//! (sticky sessions); anywhere else its session is unknown (`404`).
//!
//! **In Redis** ([`SessionStore::redis`], feature `session-redis`): a fleet of instances
//! sharing one Redis serves any request of any 2025-era Streamable HTTP session
//! (<https://modelcontextprotocol.io/specification/2025-11-25/basic/transports>, Session
//! Management):
//!
//! - The session's record (negotiated version, the client's capabilities and info, log
//!   level, resource subscriptions, owning principal, cap bucket, created time, whether it
//!   completed its handshake) is one hash, `<prefix>s:<id>`, whose key expires after
//!   [`session_grace`](super::LegacyHttpConfig::session_grace) until the handshake
//!   completes, then after
//!   [`session_idle_timeout`](super::LegacyHttpConfig::session_idle_timeout) of idleness:
//!   every request refreshes it (`PEXPIRE`), and so does the instance that serves an open
//!   stream or a running request, as a busy session never expires in memory either.
//! - An instance that gets a request for a session it does not hold loads the record and
//!   rebuilds the session locally (a cache). Every request of a cached session is checked
//!   against the store first (one round trip, a Lua script that also refreshes the
//!   expiry and returns the changing state): a session deleted or expired anywhere is
//!   refused (`404`) everywhere. `logging/setLevel`, `resources/subscribe` and
//!   `resources/unsubscribe` are written to the record before they are answered.
//! - The caps ([`max_sessions`](super::LegacyHttpConfig::max_sessions),
//!   [`max_sessions_per_principal`](super::LegacyHttpConfig::max_sessions_per_principal),
//!   [`max_sessions_per_address`](super::LegacyHttpConfig::max_sessions_per_address)) hold
//!   across the fleet: sorted sets of session ids scored by their expiry time, purged and
//!   counted in the same Lua script that creates the session. Eviction of idle sessions to
//!   make room stays in memory only: with Redis, at a fleet-wide cap a new session is
//!   refused (`503`), and places come back as sessions end (DELETE) or expire.
//! - Every event of a session's streams is also appended (`XADD` with `MAXLEN` of what an
//!   instance keeps in memory, 256 undelivered and 64 delivered events) to a Redis
//!   stream per SSE stream, `<prefix>e:<id>:<stream>`, which expires with the session's
//!   idle timeout. Stream numbers and server-to-client request ids are unique in the
//!   fleet: each instance takes a number `n` (`INCR`) when it connects, and numbers its
//!   streams and requests from `n·2^32`. A `Last-Event-ID` another instance gave is
//!   replayed from Redis; for a GET stream the replay then continues live with this
//!   instance's own GET stream (whose new events have ids of this instance's stream);
//!   for a request's stream the replay ends with what was stored (the request ran on the
//!   other instance). An id past what Redis holds of that stream (an instance that died
//!   can have sent an event whose copy had not reached Redis yet) replays nothing.
//! - The answer to a server-to-client request, and a `notifications/cancelled`, that
//!   reach an instance where nothing waits for them are published on the channel
//!   `<prefix>forward`; the instance that asked (its number is in the request id) or
//!   that runs the request completes it.
//!
//! **Degraded mode.** When Redis cannot be reached (or answers too slowly, past the
//! [timeout](RedisSessionStoreBuilder::timeout)), every request of a shared session and
//! every `initialize` is refused with `503` and a JSON-RPC error naming the cause, and
//! logged at `warn`: a session is never served from the cache of an instance that cannot
//! check it was not deleted. An event that cannot be written to Redis is still sent on
//! the instance's own stream (it is lost only for a resumption on another instance), and
//! the loss is logged at `warn`. An answer that cannot be forwarded is refused (`503`),
//! so the client knows; one forwarded while the receiving instance's subscription is
//! down (it reconnects with a backoff, and logs the loss) is lost, and the request that
//! waits for it fails at [`ask_timeout`](super::LegacyHttpConfig::ask_timeout).
//!
//! The 2024-11-05 HTTP+SSE transport's sessions stay in memory whatever the store: their
//! one SSE connection is the session. One Redis (or a primary), not a Redis Cluster: the
//! scripts touch keys of several slots.

use std::sync::Arc;

#[cfg(feature = "session-redis")]
pub(super) mod redis;

#[cfg(feature = "session-redis")]
pub use self::redis::RedisSessionStoreBuilder;
#[cfg(feature = "session-redis")]
pub(super) use self::redis::{Fleet, Mirror, RedisSessions};

/// How many stream numbers and server-to-client request ids one instance has in one
/// shared session, from its base (2^32).
pub(super) const RANGE: u64 = 1 << 32;

/// Where the initialize-era Streamable HTTP sessions of a
/// [`DualEraHttp`](super::DualEraHttp) live; see the [module docs](self). Cheap to clone:
/// clones share one connection.
#[derive(Clone, Default)]
pub struct SessionStore {
    #[cfg(feature = "session-redis")]
    redis: Option<Arc<RedisSessions>>,
    #[cfg(not(feature = "session-redis"))]
    _memory: std::marker::PhantomData<Arc<()>>,
}

impl std::fmt::Debug for SessionStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut out = f.debug_struct("SessionStore");
        out.field("shared", &self.is_shared());
        #[cfg(feature = "session-redis")]
        if let Some(redis) = &self.redis {
            out.field("prefix", &redis.prefix())
                .field("instance", &redis.instance());
        }
        out.finish()
    }
}

impl SessionStore {
    /// Sessions in the memory of the instance that created them (the default).
    pub fn memory() -> Self {
        Self::default()
    }

    /// Whether the sessions are shared by the instances that use the same store (in
    /// Redis), rather than kept by the instance that created each.
    pub fn is_shared(&self) -> bool {
        #[cfg(feature = "session-redis")]
        {
            self.redis.is_some()
        }
        #[cfg(not(feature = "session-redis"))]
        {
            false
        }
    }

    /// Starts configuring a store in the Redis at `url` (`redis://host:port/db`;
    /// `rediss://` with TLS is not compiled in), shared by every instance that connects to
    /// it with the same prefix. Feature `session-redis`.
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), mcp_legacy::Error> {
    /// use mcp_legacy::http::{LegacyHttpConfig, SessionStore};
    ///
    /// let store = SessionStore::redis("redis://127.0.0.1:6379/")
    ///     .prefix("prod:mcp:legacy:")
    ///     .connect()
    ///     .await?;
    /// let legacy = LegacyHttpConfig::default().session_store(store);
    /// # let _ = legacy; Ok(()) }
    /// ```
    #[cfg(feature = "session-redis")]
    pub fn redis(url: impl Into<String>) -> RedisSessionStoreBuilder {
        RedisSessionStoreBuilder::new(url.into())
    }

    /// The Redis store, if this is one.
    #[cfg(feature = "session-redis")]
    pub(super) fn shared(&self) -> Option<&Arc<RedisSessions>> {
        self.redis.as_ref()
    }
}
