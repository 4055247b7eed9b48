//! The Redis session store (feature `session-redis`): the connection, the Lua scripts that
//! make each step atomic, the mirror of each session's events, and the follower of the
//! channel that carries answers and cancellations to the instance they are for. The
//! layout and the degraded mode are in the [parent module's docs](super).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt as _;
use mcp_jsonrpc::{DecodeOptions, Decoded, Message, decode};
use mcp_types::RequestId;
use redis::Script;
use redis::aio::{ConnectionManager, ConnectionManagerConfig, PubSubSink, PubSubStream};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::mpsc;

use super::super::Sessions;
use super::super::log::{MAX_UNDELIVERED, RETAINED};
use super::super::state::{answer, cancel};
use super::SessionStore;
use crate::Error;
use crate::session::Facts;
use crate::session::lock;

/// Creates a session unless its id exists or a cap is met: the expired entries of the
/// sorted sets are purged, both counted, the record written and counted, in one step.
/// 1 created, 0 at a cap, -1 the id exists.
const CREATE: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
if redis.call('EXISTS', KEYS[1]) == 1 then return -1 end
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[6]) then return 0 end
if redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[7]) then return 0 end
local ttl = tonumber(ARGV[5])
redis.call('HSET', KEYS[1], 'd', ARGV[2], 'o', ARGV[3], 'b', ARGV[4], 'c', '0', 's', '[]', 't', now)
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('ZADD', KEYS[2], now + ttl, ARGV[1])
redis.call('ZADD', KEYS[3], now + ttl, ARGV[1])
if redis.call('PTTL', KEYS[3]) < ttl then redis.call('PEXPIRE', KEYS[3], ttl) end
return 1
";

/// Reads a session, marks it completed and refreshes its expiry (the key and its places in
/// the sorted sets); nil when it does not exist.
const TOUCH: &str = r"
local f = redis.call('HMGET', KEYS[1], 'd', 'o', 'b', 'c', 'l', 's')
if not f[1] then return false end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[2])
redis.call('HSET', KEYS[1], 'c', '1')
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('ZADD', KEYS[2], 'XX', now + ttl, ARGV[1])
local b = ARGV[3] .. f[3]
redis.call('ZADD', b, 'XX', now + ttl, ARGV[1])
if redis.call('PTTL', b) < ttl then redis.call('PEXPIRE', b, ttl) end
return f
";

/// Sets one field of a session's record if the session exists.
const UPDATE: &str = r"
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
";

/// Deletes a session if it belongs to the owner given, and gives back its places.
const REMOVE: &str = r"
local f = redis.call('HMGET', KEYS[1], 'o', 'b')
if not f[1] or f[1] ~= ARGV[2] then return 0 end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', ARGV[3] .. f[2], ARGV[1])
return 1
";

/// The longest expiry given to a key (ten years): a configured duration past it is
/// clamped, never overflowed.
const MAX_TTL_MS: u64 = 10 * 365 * 24 * 60 * 60 * 1000;
/// How many events of one session may wait to be written to Redis.
const MIRROR_QUEUE: usize = 1024;
/// The longest message read from the forwarding channel (4 MiB).
const MAX_FORWARD_BYTES: usize = 4 << 20;
/// The most instances numbered in one prefix: instance numbers times 2^32 stay below
/// 2^63, the range of a JSON-RPC integer id.
const MAX_INSTANCE: u64 = (1 << 31) - 1;

/// Settings of a Redis [`SessionStore`], then [`connect`](Self::connect).
#[derive(Debug, Clone)]
#[must_use]
pub struct RedisSessionStoreBuilder {
    url: String,
    prefix: String,
    timeout: Duration,
}

impl RedisSessionStoreBuilder {
    pub(super) fn new(url: String) -> Self {
        RedisSessionStoreBuilder {
            url,
            prefix: "mcp:legacy:".to_owned(),
            timeout: Duration::from_secs(5),
        }
    }

    /// Names keys and the channel `<prefix>…` (default `mcp:legacy:`): the instances of
    /// one fleet share it, another fleet on the same Redis takes another.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// Sets how long connecting and each command may take (default 5 s, at least 10 ms);
    /// past it Redis counts as unreachable and the request is refused (`503`).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout.max(Duration::from_millis(10));
        self
    }

    /// Connects, takes this instance's number and subscribes to the forwarding channel.
    ///
    /// # Errors
    /// [`Error::SessionStore`] when the URL is not one of Redis, Redis cannot be reached
    /// within the timeout, or the prefix has numbered its 2^31 − 1 instances.
    pub async fn connect(self) -> Result<SessionStore, Error> {
        let client = redis::Client::open(self.url.as_str()).map_err(store_error)?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(self.timeout))
            .set_response_timeout(Some(self.timeout))
            .set_number_of_retries(1);
        let connecting = ConnectionManager::new_with_config(client.clone(), config);
        let mut connection = tokio::time::timeout(self.timeout, connecting)
            .await
            .map_err(|_| store_error(timed_out("connecting")))?
            .map_err(store_error)?;
        let instance: u64 = redis::cmd("INCR")
            .arg(format!("{}instances", self.prefix))
            .query_async(&mut connection)
            .await
            .map_err(store_error)?;
        if instance == 0 || instance > MAX_INSTANCE {
            return Err(store_error(std::io::Error::other(format!(
                "the prefix {:?} has numbered too many instances; reset its `instances` key",
                self.prefix
            ))));
        }
        let channel = format!("{}forward", self.prefix);
        let tables: Arc<Mutex<Vec<Weak<Sessions>>>> = Arc::default();
        let follower = Follower {
            client,
            channel: channel.clone(),
            instance,
            tables: Arc::clone(&tables),
            timeout: self.timeout,
        };
        let (sink, stream) = follower.subscribe().await.map_err(store_error)?;
        let follower = tokio::spawn(follower.run(sink, stream)).abort_handle();
        let sessions = RedisSessions {
            connection,
            prefix: self.prefix,
            channel,
            instance,
            timeout: self.timeout,
            create: Script::new(CREATE),
            touch: Script::new(TOUCH),
            update: Script::new(UPDATE),
            remove: Script::new(REMOVE),
            tables,
            follower,
            mirror_down: Arc::new(AtomicBool::new(false)),
        };
        Ok(SessionStore {
            redis: Some(Arc::new(sessions)),
        })
    }
}

fn store_error(e: impl std::error::Error + Send + Sync + 'static) -> Error {
    Error::SessionStore(Box::new(e))
}

fn timed_out(what: &str) -> redis::RedisError {
    redis::RedisError::from(std::io::Error::new(
        std::io::ErrorKind::TimedOut,
        format!("{what} took too long"),
    ))
}

/// A duration as the milliseconds of a key's expiry: at least 1, at most [`MAX_TTL_MS`].
pub(in crate::http) fn ttl_ms(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis())
        .unwrap_or(u64::MAX)
        .clamp(1, MAX_TTL_MS)
}

/// Redis could not be reached, or answered what this store never writes: the request is
/// refused (`503`), never served on a guess.
#[derive(Debug)]
pub(in crate::http) struct Unavailable(pub(in crate::http) String);

impl From<redis::RedisError> for Unavailable {
    fn from(e: redis::RedisError) -> Self {
        Unavailable(e.to_string())
    }
}

/// Entries of a Redis stream as `XRANGE` answers them: each id with its fields and values.
type Entries = Vec<(String, Vec<Vec<u8>>)>;

/// A stored session, as [`RedisSessions::touch`] reads it.
pub(in crate::http) struct Record {
    pub(in crate::http) facts: Facts,
    /// `""` without authentication, `p:<id>` for a principal's.
    pub(in crate::http) owner: String,
    pub(in crate::http) bucket: String,
    pub(in crate::http) log_level: Option<Value>,
    pub(in crate::http) subscriptions: Vec<String>,
}

/// How a creation went.
pub(in crate::http) enum Created {
    Yes,
    /// A fleet-wide cap is met.
    Full,
    /// The id exists (128 random bits met again: refused like a cap).
    Taken,
}

/// The owner of a session as the store writes it.
pub(in crate::http) fn owner_key(owner: Option<&str>) -> String {
    owner.map_or_else(String::new, |id| format!("p:{id}"))
}

/// The connection to Redis and what the instance's sessions share.
pub(crate) struct RedisSessions {
    connection: ConnectionManager,
    prefix: String,
    channel: String,
    instance: u64,
    timeout: Duration,
    create: Script,
    touch: Script,
    update: Script,
    remove: Script,
    /// The session tables of the endpoints using this store, where forwarded answers and
    /// cancellations are looked for.
    tables: Arc<Mutex<Vec<Weak<Sessions>>>>,
    follower: tokio::task::AbortHandle,
    /// Whether writing events to Redis fails now: the loss is logged when it starts.
    mirror_down: Arc<AtomicBool>,
}

impl Drop for RedisSessions {
    fn drop(&mut self) {
        self.follower.abort();
    }
}

/// A shared session's place in the store, held by its local copy.
pub(crate) struct Fleet {
    pub(in crate::http) id: Box<str>,
    pub(in crate::http) store: Arc<RedisSessions>,
    /// Where the session's event logs on this instance hand their events.
    pub(in crate::http) mirror: Mirror,
}

/// Where a shared session's event logs hand their events, for the task that writes them
/// to Redis in order.
#[derive(Debug, Clone)]
pub(crate) struct Mirror {
    queue: mpsc::Sender<(u64, u64, Bytes)>,
    down: Arc<AtomicBool>,
}

impl Mirror {
    /// Queues event `seq` of `stream`; a full queue loses it for other instances (not for
    /// this one's readers), which is logged.
    pub(crate) fn send(&self, stream: u64, seq: u64, frame: &Bytes) {
        if self.queue.try_send((stream, seq, frame.clone())).is_err()
            && !self.down.swap(true, Ordering::AcqRel)
        {
            tracing::warn!(
                stream,
                seq,
                "events of a shared legacy session could not be queued for Redis: \
                 another instance cannot replay them"
            );
        }
    }
}

/// A message on the forwarding channel.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Forwarded {
    /// The instance it is for; 0 for all.
    to: u64,
    /// The session.
    s: String,
    /// The client's JSON-RPC response to forward.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    answer: Option<String>,
    /// The id of the client's request to cancel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cancel: Option<Value>,
}

impl RedisSessions {
    pub(super) fn prefix(&self) -> &str {
        &self.prefix
    }

    /// This instance's number: its streams and requests are numbered from it times 2^32.
    pub(in crate::http) fn instance(&self) -> u64 {
        self.instance
    }

    /// The base of this instance's numbers in a session.
    pub(in crate::http) fn base(&self) -> u64 {
        self.instance << 32
    }

    /// Where forwarded answers and cancellations are looked for.
    pub(in crate::http) fn register(&self, table: &Arc<Sessions>) {
        lock(&self.tables).push(Arc::downgrade(table));
    }

    fn key(&self, id: &str) -> String {
        format!("{}s:{id}", self.prefix)
    }

    fn all(&self) -> String {
        format!("{}all", self.prefix)
    }

    fn buckets(&self) -> String {
        format!("{}b:", self.prefix)
    }

    fn events(&self, id: &str, stream: u64) -> String {
        format!("{}e:{id}:{stream}", self.prefix)
    }

    async fn bounded<T>(
        &self,
        what: &str,
        call: impl Future<Output = redis::RedisResult<T>>,
    ) -> Result<T, Unavailable> {
        match tokio::time::timeout(self.timeout, call).await {
            Ok(result) => result.map_err(Unavailable::from),
            Err(_) => Err(Unavailable(format!("{what} took too long"))),
        }
    }

    /// Creates session `id`, counted against `total` sessions in all and `per_bucket` in
    /// its bucket; it expires after `grace` unless a request completes it.
    #[allow(clippy::too_many_arguments)]
    pub(in crate::http) async fn create(
        &self,
        id: &str,
        facts: &Facts,
        owner: &str,
        bucket: &str,
        grace: Duration,
        total: usize,
        per_bucket: usize,
    ) -> Result<Created, Unavailable> {
        let facts =
            serde_json::to_string(facts).map_err(|e| Unavailable(format!("encoding: {e}")))?;
        let mut connection = self.connection.clone();
        let mut invocation = self.create.key(self.key(id));
        invocation
            .key(self.all())
            .key(format!("{}{bucket}", self.buckets()))
            .arg(id)
            .arg(facts)
            .arg(owner)
            .arg(bucket)
            .arg(ttl_ms(grace))
            .arg(u64::try_from(total).unwrap_or(u64::MAX).min(1 << 53))
            .arg(u64::try_from(per_bucket).unwrap_or(u64::MAX).min(1 << 53));
        let created: i64 = self
            .bounded(
                "creating a session",
                invocation.invoke_async(&mut connection),
            )
            .await?;
        Ok(match created {
            1 => Created::Yes,
            0 => Created::Full,
            _ => Created::Taken,
        })
    }

    /// Reads session `id`, completes it and refreshes its expiry to `idle`; `None` when
    /// it does not exist (deleted or expired).
    pub(in crate::http) async fn touch(
        &self,
        id: &str,
        idle: Duration,
    ) -> Result<Option<Record>, Unavailable> {
        let mut connection = self.connection.clone();
        let mut invocation = self.touch.key(self.key(id));
        invocation
            .key(self.all())
            .arg(id)
            .arg(ttl_ms(idle))
            .arg(self.buckets());
        let fields: Option<Vec<Option<String>>> = self
            .bounded(
                "reading a session",
                invocation.invoke_async(&mut connection),
            )
            .await?;
        let Some(fields) = fields else {
            return Ok(None);
        };
        let unreadable =
            |what: &str| Unavailable(format!("the stored session's {what} is unreadable"));
        let [
            Some(facts),
            Some(owner),
            Some(bucket),
            _,
            level,
            subscriptions,
        ] = <[Option<String>; 6]>::try_from(fields).map_err(|_| unreadable("record"))?
        else {
            return Err(unreadable("record"));
        };
        let facts = serde_json::from_str(&facts).map_err(|_| unreadable("facts"))?;
        let log_level = level
            .map(|l| serde_json::from_str(&l))
            .transpose()
            .map_err(|_| unreadable("log level"))?;
        let subscriptions = subscriptions
            .map(|s| serde_json::from_str(&s))
            .transpose()
            .map_err(|_| unreadable("subscriptions"))?
            .unwrap_or_default();
        Ok(Some(Record {
            facts,
            owner,
            bucket,
            log_level,
            subscriptions,
        }))
    }

    /// Writes the log level (`l`) or the subscriptions (`s`) of session `id`; `false`
    /// when the session no longer exists.
    pub(in crate::http) async fn update(
        &self,
        id: &str,
        field: &str,
        value: &Value,
    ) -> Result<bool, Unavailable> {
        let mut connection = self.connection.clone();
        let mut invocation = self.update.key(self.key(id));
        invocation.arg(field).arg(value.to_string());
        let updated: i64 = self
            .bounded(
                "updating a session",
                invocation.invoke_async(&mut connection),
            )
            .await?;
        Ok(updated == 1)
    }

    /// Deletes session `id` if `owner` owns it; whether it did.
    pub(in crate::http) async fn remove(&self, id: &str, owner: &str) -> Result<bool, Unavailable> {
        let mut connection = self.connection.clone();
        let mut invocation = self.remove.key(self.key(id));
        invocation
            .key(self.all())
            .arg(id)
            .arg(owner)
            .arg(self.buckets());
        let removed: i64 = self
            .bounded(
                "deleting a session",
                invocation.invoke_async(&mut connection),
            )
            .await?;
        Ok(removed == 1)
    }

    /// The stored events of stream `stream` of session `id` after number `after`, in
    /// order. Nothing when Redis holds no event past `after`: that includes an id past what
    /// was stored, since an instance that died may have sent an event before its copy
    /// reached Redis; the client has that event, and whatever came after it on the dead
    /// instance is lost either way.
    pub(in crate::http) async fn events_after(
        &self,
        id: &str,
        stream: u64,
        after: u64,
    ) -> Result<Vec<(u64, Bytes)>, Unavailable> {
        let key = self.events(id, stream);
        let Some(from) = after.checked_add(1) else {
            // Past the last number there can be: nothing follows it.
            return Ok(Vec::new());
        };
        let mut connection = self.connection.clone();
        let entries: Entries = self
            .bounded(
                "reading events",
                redis::cmd("XRANGE")
                    .arg(&key)
                    .arg(format!("0-{from}"))
                    .arg("+")
                    .query_async(&mut connection),
            )
            .await?;
        let number = |id: &str| id.strip_prefix("0-").and_then(|n| n.parse::<u64>().ok());
        let mut events = Vec::with_capacity(entries.len());
        for (event, mut fields) in entries {
            let seq =
                number(&event).ok_or_else(|| Unavailable("an event id is unreadable".into()))?;
            if fields.len() != 2 {
                return Err(Unavailable("an event is unreadable".into()));
            }
            events.push((seq, Bytes::from(fields.swap_remove(1))));
        }
        Ok(events)
    }

    /// A mirror for the events of session `id`, and the task that writes what it is handed
    /// to Redis until the session's logs are gone; each stream expires after `idle`.
    pub(in crate::http) fn mirror(self: &Arc<Self>, id: &str, idle: Duration) -> Mirror {
        let (queue, mut events) = mpsc::channel::<(u64, u64, Bytes)>(MIRROR_QUEUE);
        let store = Arc::clone(self);
        let id = id.to_owned();
        let down = Arc::clone(&self.mirror_down);
        let ttl = ttl_ms(idle);
        tokio::spawn(async move {
            while let Some((stream, seq, frame)) = events.recv().await {
                let key = store.events(&id, stream);
                let mut pipe = redis::pipe();
                pipe.cmd("XADD")
                    .arg(&key)
                    .arg("MAXLEN")
                    .arg(MAX_UNDELIVERED + RETAINED)
                    .arg(format!("0-{seq}"))
                    .arg("d")
                    .arg(frame.as_ref())
                    .ignore()
                    .cmd("PEXPIRE")
                    .arg(&key)
                    .arg(ttl)
                    .ignore();
                let mut connection = store.connection.clone();
                let written: Result<(), Unavailable> = store
                    .bounded("writing an event", pipe.query_async(&mut connection))
                    .await;
                match written {
                    Ok(()) => {
                        if store.mirror_down.swap(false, Ordering::AcqRel) {
                            tracing::info!("events of shared legacy sessions reach Redis again");
                        }
                    }
                    Err(e) => {
                        if !store.mirror_down.swap(true, Ordering::AcqRel) {
                            tracing::warn!(
                                error = %e.0,
                                stream,
                                seq,
                                "an event of a shared legacy session could not be written to \
                                 Redis: another instance cannot replay it"
                            );
                        }
                    }
                }
            }
        });
        Mirror { queue, down }
    }

    /// Publishes the client's `answer` (a JSON-RPC response) to server-to-client request
    /// `ask` of session `id`, for the instance that asked.
    pub(in crate::http) async fn forward_answer(
        &self,
        id: &str,
        ask: u64,
        answer: String,
    ) -> Result<(), Unavailable> {
        self.publish(&Forwarded {
            to: ask >> 32,
            s: id.to_owned(),
            answer: Some(answer),
            cancel: None,
        })
        .await
    }

    /// Publishes the cancellation of the client's request `request` of session `id`, for
    /// whichever instance runs it.
    pub(in crate::http) async fn forward_cancel(
        &self,
        id: &str,
        request: &RequestId,
    ) -> Result<(), Unavailable> {
        let cancel = serde_json::to_value(request).map_err(|e| Unavailable(e.to_string()))?;
        self.publish(&Forwarded {
            to: 0,
            s: id.to_owned(),
            answer: None,
            cancel: Some(cancel),
        })
        .await
    }

    async fn publish(&self, message: &Forwarded) -> Result<(), Unavailable> {
        let message = serde_json::to_string(message).map_err(|e| Unavailable(e.to_string()))?;
        let mut connection = self.connection.clone();
        let mut command = redis::cmd("PUBLISH");
        command.arg(&self.channel).arg(message);
        let _receivers: i64 = self
            .bounded("forwarding", command.query_async(&mut connection))
            .await?;
        Ok(())
    }
}

/// The task that follows the forwarding channel and completes, on this instance, what
/// another instance received.
struct Follower {
    client: redis::Client,
    channel: String,
    instance: u64,
    tables: Arc<Mutex<Vec<Weak<Sessions>>>>,
    timeout: Duration,
}

impl Follower {
    async fn subscribe(&self) -> redis::RedisResult<(PubSubSink, PubSubStream)> {
        let subscribing = async {
            let (mut sink, stream) = self.client.get_async_pubsub().await?.split();
            sink.subscribe(&self.channel).await?;
            Ok((sink, stream))
        };
        tokio::time::timeout(self.timeout, subscribing)
            .await
            .unwrap_or_else(|_| Err(timed_out("subscribing")))
    }

    async fn run(self, mut sink: PubSubSink, mut stream: PubSubStream) {
        let mut wait = Duration::from_millis(100);
        loop {
            let lost = self.follow(&mut sink, &mut stream).await;
            tracing::warn!(
                channel = %self.channel,
                reason = %lost,
                "lost the Redis subscription of shared legacy sessions: answers and \
                 cancellations forwarded to this instance are lost until it is back"
            );
            (sink, stream) = loop {
                tokio::time::sleep(wait).await;
                wait = wait.saturating_mul(2).min(Duration::from_secs(5));
                match self.subscribe().await {
                    Ok(subscribed) => break subscribed,
                    Err(e) => tracing::debug!(error = %e, "cannot resubscribe yet"),
                }
            };
            wait = Duration::from_millis(100);
            tracing::info!(channel = %self.channel, "the Redis subscription of shared legacy sessions is back");
        }
    }

    /// Handles the channel's messages until the connection is lost; why it was.
    async fn follow(&self, sink: &mut PubSubSink, stream: &mut PubSubStream) -> String {
        loop {
            let message = tokio::select! {
                message = stream.next() => message,
                () = tokio::time::sleep(Duration::from_secs(15)) => {
                    match tokio::time::timeout(self.timeout, sink.ping::<redis::Value>()).await {
                        Ok(Ok(_)) => continue,
                        Ok(Err(e)) => return format!("PING failed: {e}"),
                        Err(_) => return "no answer to PING".to_owned(),
                    }
                }
            };
            let Some(message) = message else {
                return "the connection closed".to_owned();
            };
            self.deliver(message.get_payload_bytes());
        }
    }

    fn deliver(&self, payload: &[u8]) {
        if payload.len() > MAX_FORWARD_BYTES {
            tracing::warn!(
                bytes = payload.len(),
                "dropped a forwarded message: too long"
            );
            return;
        }
        let Ok(message) = serde_json::from_slice::<Forwarded>(payload) else {
            tracing::warn!("dropped an unreadable forwarded message");
            return;
        };
        if message.to != 0 && message.to != self.instance {
            return;
        }
        let tables: Vec<Arc<Sessions>> = lock(&self.tables)
            .iter()
            .filter_map(Weak::upgrade)
            .collect();
        for table in tables {
            let Some(session) = lock(&table).get(&message.s) else {
                continue;
            };
            if let Some(frame) = &message.answer
                && let Ok(Decoded::Single(Message::Response(response))) =
                    decode(frame.as_bytes(), DecodeOptions::default())
            {
                drop(answer(&session, response));
            }
            if let Some(id) = &message.cancel
                && let Ok(id) = serde_json::from_value::<RequestId>(id.clone())
            {
                cancel(&session, &id);
            }
        }
    }
}
