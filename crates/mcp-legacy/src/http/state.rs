//! One legacy session on HTTP: its state, what a request sends on its own (server-to-client
//! requests on its stream, change notifications on the GET stream), and the routing of
//! the client's answers and cancellations.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use mcp_jsonrpc::{
    CancellationToken, ErrorObject, Notification, encode_notification, encode_request,
};
use mcp_types::RequestId;
use serde_json::Value;
use tokio::sync::oneshot;

use super::GET_STREAM;
use super::log::EventLog;
use super::table::Bucket;
use crate::session::{self, Session, lock};

/// One legacy session on HTTP.
pub(super) struct HttpSession {
    /// Set by `initialize`: at once for Streamable HTTP (the session exists only after
    /// it), later for the HTTP+SSE transport (whose session starts with its GET).
    pub(super) session: OnceLock<Session>,
    /// Fired when the session ends: its requests stop and its streams close.
    pub(super) token: CancellationToken,
    /// When the session was created, for [`LegacyHttpConfig::session_grace`](super::LegacyHttpConfig::session_grace).
    pub(super) created: Instant,
    /// When the session was last used (a request found it, or the last one using it
    /// ended): its idle time, and its place in the eviction order.
    pub(super) last_seen: Mutex<Instant>,
    /// Whether the client went on after `initialize` (`notifications/initialized` or any
    /// later message).
    pub(super) completed: AtomicBool,
    /// How many of the server's requests use the session now (`table::InUse`).
    pub(super) users: AtomicUsize,
    /// Whose cap the session counts against.
    pub(super) bucket: Bucket,
    pub(super) next_stream: AtomicU64,
    /// The request streams kept for replay, and the GET stream under [`GET_STREAM`]: at
    /// most `max_streams_per_session`, numbered in order. Most POSTs insert one and remove
    /// it, and a B-tree's search of so few costs less than hashing the number.
    pub(super) streams: Mutex<BTreeMap<u64, Arc<EventLog>>>,
    pub(super) get: Arc<EventLog>,
    pub(super) next_ask: AtomicI64,
    /// Server-to-client requests waiting for the client's POSTed answer.
    pub(super) pending: Mutex<HashMap<i64, oneshot::Sender<Result<Value, ErrorObject>>>>,
    /// The client's requests running now, for `notifications/cancelled`.
    pub(super) running: Mutex<HashMap<RequestId, CancellationToken>>,
    /// The id of the principal that created the session, when requests are authenticated
    /// (see `auth.rs`).
    pub(super) owner: Option<Box<str>>,
    /// The first number of this instance's streams and server-to-client requests in the
    /// session: 0 for a session of this instance only; for a session kept in a shared
    /// store, the instance's number times 2^32, so that numbers are unique across the
    /// fleet (`store.rs`).
    pub(super) base: u64,
    /// The session in the shared store: its id and the store (feature `session-redis`).
    #[cfg(feature = "session-redis")]
    pub(super) fleet: Option<super::store::Fleet>,
    /// Counts the session in the `mcp_legacy_sessions` gauge while it lives.
    #[cfg(feature = "metrics")]
    _counted: Counted,
}

/// The gauge of open initialize-era HTTP sessions (feature `metrics`).
#[cfg(feature = "metrics")]
pub const SESSIONS_GAUGE: &str = "mcp_legacy_sessions";

/// One session in [`SESSIONS_GAUGE`], for as long as it lives.
#[cfg(feature = "metrics")]
struct Counted;

#[cfg(feature = "metrics")]
impl Counted {
    fn new() -> Self {
        metrics::gauge!(SESSIONS_GAUGE).increment(1.0);
        Counted
    }
}

#[cfg(feature = "metrics")]
impl Drop for Counted {
    fn drop(&mut self) {
        metrics::gauge!(SESSIONS_GAUGE).decrement(1.0);
    }
}

impl HttpSession {
    /// A session of `bucket`, ended by `token`; a `lossy_get` GET stream drops its oldest
    /// events rather than make a writer wait.
    pub(super) fn new(
        session: Option<Session>,
        lossy_get: bool,
        token: CancellationToken,
        bucket: Bucket,
    ) -> Self {
        let get = EventLog::new(GET_STREAM, lossy_get);
        Self::with_get(session, get, token, bucket, GET_STREAM)
    }

    /// A session whose GET stream is `get`, numbering its streams and server-to-client
    /// requests from `base` (see [`base`](Self::base)).
    pub(super) fn with_get(
        session: Option<Session>,
        get: Arc<EventLog>,
        token: CancellationToken,
        bucket: Bucket,
        base: u64,
    ) -> Self {
        let slot = OnceLock::new();
        if let Some(session) = session {
            let _ = slot.set(session);
        }
        let now = Instant::now();
        HttpSession {
            session: slot,
            token,
            created: now,
            last_seen: Mutex::new(now),
            completed: AtomicBool::new(false),
            users: AtomicUsize::new(0),
            bucket,
            next_stream: AtomicU64::new(base + 1),
            streams: Mutex::new(BTreeMap::new()),
            get,
            // The base is below 2^63 (`store.rs` numbers instances below 2^31).
            next_ask: AtomicI64::new(i64::try_from(base).unwrap_or(i64::MAX - 1) + 1),
            pending: Mutex::new(HashMap::new()),
            running: Mutex::new(HashMap::new()),
            owner: None,
            base,
            #[cfg(feature = "session-redis")]
            fleet: None,
            #[cfg(feature = "metrics")]
            _counted: Counted::new(),
        }
    }

    /// The negotiated revision; 2024-11-05 before `initialize`.
    pub(super) fn version(&self) -> &'static str {
        self.session.get().map_or("2024-11-05", |s| s.version)
    }

    pub(super) fn touch(&self) {
        *lock(&self.last_seen) = Instant::now();
    }

    /// Registers a request of the client that is about to run, so that
    /// `notifications/cancelled` can stop it; refused when a request with the same id is
    /// running (its cancellation would be ambiguous, and the count would be wrong), or
    /// when `limit` requests run already. The check and the registration are one step.
    pub(super) fn register(
        &self,
        id: &RequestId,
        token: &CancellationToken,
        limit: Option<usize>,
    ) -> Result<(), NotRegistered> {
        let mut running = lock(&self.running);
        if running.contains_key(id) {
            return Err(NotRegistered::Duplicate);
        }
        if limit.is_some_and(|limit| running.len() >= limit) {
            return Err(NotRegistered::Busy);
        }
        running.insert(id.clone(), token.clone());
        // A request registered as the session ends is cancelled with it: either `end`
        // finds it among the running, or it finds the session's token cancelled here.
        if self.token.is_cancelled() {
            token.cancel();
        }
        Ok(())
    }

    /// Cancels the session's token and every request it runs.
    fn cancel_all(&self) {
        self.token.cancel();
        for token in lock(&self.running).values() {
            token.cancel();
        }
    }

    /// The first stream number past this instance's range in the session, if it has one.
    pub(super) fn stream_limit(&self) -> Option<u64> {
        (self.base != 0).then(|| self.base.saturating_add(super::store::RANGE))
    }

    pub(super) fn end(&self) {
        self.cancel_all();
        self.get.finish();
        for log in lock(&self.streams).values() {
            log.finish();
        }
    }

    /// Ends what this instance serves of the session as it shuts down: its requests stop,
    /// and its streams end with the reconnection delay `retry`, so that the client
    /// reconnects (to another instance, when the session is shared) instead of giving up.
    pub(super) fn suspend(&self, retry: Duration) {
        self.cancel_all();
        self.get.suspend(retry);
        for log in lock(&self.streams).values() {
            log.suspend(retry);
        }
    }
}

/// Why a request was not registered to run in its session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum NotRegistered {
    /// A request with the same id is running in the session.
    Duplicate,
    /// The session runs as many requests as it may.
    Busy,
}

impl NotRegistered {
    /// The answer to the request that was not registered.
    pub(super) fn error(self) -> ErrorObject {
        match self {
            NotRegistered::Duplicate => ErrorObject::new(
                mcp_types::ErrorCode::INVALID_REQUEST,
                "a request with this id is already running in this session",
            ),
            NotRegistered::Busy => ErrorObject::new(
                mcp_types::ErrorCode::INTERNAL_ERROR,
                "too many requests are running in this session; retry later",
            ),
        }
    }
}

/// What a legacy request on HTTP sends on its own: see [`Link::Http`].
pub(crate) struct Outbound {
    pub(super) session: Arc<HttpSession>,
    /// The stream of the request being served.
    pub(super) log: Arc<EventLog>,
    pub(super) ask_timeout: Duration,
    pub(super) max_pending: usize,
}

/// Where a session's relay sends change notifications: its GET stream.
pub(crate) struct Notifier(Arc<EventLog>);

impl Outbound {
    pub(crate) fn notifier(&self) -> Notifier {
        Notifier(Arc::clone(&self.session.get))
    }

    /// Sends `method` to the client on the request's stream and waits for the answer it
    /// POSTs back.
    pub(crate) async fn ask(
        &self,
        method: &str,
        params: Option<&Value>,
    ) -> Result<Value, ErrorObject> {
        let id = self.session.next_ask.fetch_add(1, Ordering::Relaxed);
        // A shared session's numbers stay within its instance's range (`base`).
        if self.session.base != 0
            && u64::try_from(id).map_or(true, |id| id - self.session.base >= super::store::RANGE)
        {
            return Err(ErrorObject::internal(
                "this instance has used up its server-to-client request ids in this session",
            ));
        }
        let (tx, rx) = oneshot::channel();
        {
            let mut pending = lock(&self.session.pending);
            if pending.len() >= self.max_pending {
                return Err(ErrorObject::internal(
                    "too many server-to-client requests are waiting for answers",
                ));
            }
            pending.insert(id, tx);
        }
        let forget = PendingGuard {
            session: &self.session,
            id,
        };
        let frame = encode_request(&RequestId::Integer(id), method, params)
            .map_err(|e| ErrorObject::internal(e.to_string()))?;
        self.log.append(frame, false).await;
        let answer = tokio::select! {
            answer = tokio::time::timeout(self.ask_timeout, rx) => answer,
            () = self.session.token.cancelled() => {
                return Err(ErrorObject::internal("the session ended"));
            }
        };
        drop(forget);
        match answer {
            Ok(Ok(answer)) => answer,
            Ok(Err(_)) => Err(ErrorObject::internal("the session ended")),
            Err(_) => Err(ErrorObject::internal(format!(
                "the client did not answer within {:?}",
                self.ask_timeout
            ))),
        }
    }
}

pub(super) struct PendingGuard<'a> {
    session: &'a HttpSession,
    id: i64,
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        lock(&self.session.pending).remove(&self.id);
    }
}

impl Notifier {
    pub(crate) fn notify(&self, method: &str, params: Option<&Value>) -> bool {
        match encode_notification(method, params) {
            Ok(frame) => self.0.push(frame),
            Err(_) => true,
        }
    }
}

/// Routes the client's answer to a server-to-client request; gives it back when no request
/// of this instance waits for it (in a shared session, another instance may have asked).
pub(super) fn answer(
    session: &HttpSession,
    response: mcp_jsonrpc::Response,
) -> Option<mcp_jsonrpc::Response> {
    let Some(RequestId::Integer(id)) = response.id else {
        return None;
    };
    let Some(waiting) = lock(&session.pending).remove(&id) else {
        return Some(response);
    };
    let answer = response.outcome.and_then(|raw| session::parse(&raw));
    let _ = waiting.send(answer);
    None
}

/// Cancels the client's request `id` if it runs on this instance; whether it did.
pub(super) fn cancel(session: &HttpSession, id: &RequestId) -> bool {
    match lock(&session.running).get(id) {
        Some(token) => {
            token.cancel();
            true
        }
        None => false,
    }
}

/// A notification of a legacy client: `notifications/cancelled` stops the request it
/// names; the others (`initialized`, `roots/list_changed`, progress) need nothing here.
/// Gives back the id of a request to cancel that does not run on this instance (in a
/// shared session, it may run on another).
pub(super) fn notify(session: &HttpSession, notification: &Notification) -> Option<RequestId> {
    if notification.method != "notifications/cancelled" {
        return None;
    }
    let id = notification
        .params
        .as_deref()
        .and_then(|p| serde_json::from_str::<Value>(p.get()).ok())
        .and_then(|p| serde_json::from_value::<RequestId>(p["requestId"].clone()).ok())?;
    (!cancel(session, &id)).then_some(id)
}

/// Where session ids get their randomness: the operating system's source, or, in a test,
/// one that fails.
pub(super) type RandomSource = fn(&mut [u8]) -> Result<(), getrandom::Error>;

/// 128 random bits from `fill`, hex: visible ASCII as the spec requires, and unguessable.
/// Without randomness there is no id: a session id that could be guessed would let
/// anyone use the session of an unauthenticated client, so the caller refuses the
/// session instead.
pub(super) fn new_session_id(fill: RandomSource) -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 16];
    fill(&mut bytes)?;
    Ok(bytes.iter().fold(String::with_capacity(32), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_random_source_is_an_error_and_never_an_id() {
        fn broken(_: &mut [u8]) -> Result<(), getrandom::Error> {
            Err(getrandom::Error::UNSUPPORTED)
        }
        assert!(new_session_id(broken).is_err());
        let id = new_session_id(getrandom::fill).unwrap();
        assert_eq!(id.len(), 32);
        assert!(id.bytes().all(|b| b.is_ascii_hexdigit()));
    }

    #[test]
    fn ending_a_session_cancels_its_requests_and_those_registered_after() {
        let bucket = super::super::table::Bucket::Address(super::super::table::Address::Unknown);
        let session = HttpSession::new(None, false, CancellationToken::new(), bucket);
        let running = CancellationToken::new();
        session
            .register(&RequestId::from(1), &running, None)
            .unwrap();
        assert!(!running.is_cancelled());
        session.end();
        assert!(running.is_cancelled());
        let late = CancellationToken::new();
        session.register(&RequestId::from(2), &late, None).unwrap();
        assert!(
            late.is_cancelled(),
            "registered after the end, cancelled at once"
        );
        // Suspending (a shutdown) cancels the same way.
        let bucket = super::super::table::Bucket::Address(super::super::table::Address::Unknown);
        let other = HttpSession::new(None, false, CancellationToken::new(), bucket);
        let running = CancellationToken::new();
        other.register(&RequestId::from(1), &running, None).unwrap();
        other.suspend(Duration::from_secs(1));
        assert!(running.is_cancelled());
    }
}
