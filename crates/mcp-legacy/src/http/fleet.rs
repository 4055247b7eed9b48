//! The shared-store side of [`DualEraHttp`](super::DualEraHttp) (feature `session-redis`):
//! creating a session in the store, finding one there (and rebuilding it here), deleting
//! it, replaying another instance's events, forwarding answers and cancellations, writing
//! state changes, and keeping the sessions busy here alive in the store. What it does and
//! its degraded mode are in the [`store`](super::store) module's docs.

use std::sync::{Arc, Weak};
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt as _;
use http::{HeaderValue, Response, StatusCode};
use mcp_jsonrpc::{ErrorObject, Handler, encode_error, encode_raw_result};
use mcp_types::{ErrorCode, RequestId};
use serde_json::{Value, json};

use super::auth::Caller;
use super::log::{EventLog, Pacing, sse_event};
use super::store::RedisSessions;
use super::store::redis::{Created, Record, Unavailable, owner_key};
use super::table::{Bucket, InUse};
use super::{
    DualEraBody, HttpSession, RETRY_AFTER, SESSION_ID, Sessions, Shared, TOO_MANY_SESSIONS,
    encode_not_found, json as json_response, refusal, sse,
};
use crate::session::{Session, lock};

/// The owner of `caller`'s sessions as the store writes it.
fn owner_of(caller: &Caller) -> String {
    owner_key(caller.as_ref().map(|p| p.id()))
}

impl<H: Handler> Shared<H> {
    /// `503` naming the store's failure, logged at `warn`: a request of a shared session
    /// is never served without the store's word.
    pub(super) fn store_unavailable(&self, e: &Unavailable) -> Response<DualEraBody> {
        tracing::warn!(
            error = %e.0,
            "the legacy session store (Redis) cannot be reached: the request is refused"
        );
        let mut response = json_response(
            StatusCode::SERVICE_UNAVAILABLE,
            encode_error(
                None,
                &ErrorObject::new(
                    ErrorCode::INTERNAL_ERROR,
                    format!("the session store (Redis) cannot be reached: {}", e.0),
                ),
            ),
        );
        response
            .headers_mut()
            .insert(RETRY_AFTER, self.retry_after.clone());
        response
    }

    /// A local copy of shared session `id`: its streams and requests numbered in this
    /// instance's range, its events mirrored to the store.
    fn shared_session(
        &self,
        fleet: &Arc<RedisSessions>,
        id: &str,
        legacy: Session,
        bucket: Bucket,
        caller: &Caller,
    ) -> Arc<HttpSession> {
        let mirror = fleet.mirror(id, self.legacy.session_idle_timeout);
        let base = fleet.base();
        let get = EventLog::mirrored(base, true, Some(mirror.clone()));
        let mut http =
            HttpSession::with_get(Some(legacy), get, self.root.child_token(), bucket, base)
                .owned_by(caller);
        http.fleet = Some(super::store::Fleet {
            id: Box::from(id),
            store: Arc::clone(fleet),
            mirror,
        });
        Arc::new(http)
    }

    /// A new shared session, after its `initialize` succeeded: counted against the
    /// fleet-wide caps and written in one step, then cached here.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn initialize_shared(
        &self,
        fleet: &Arc<RedisSessions>,
        session_id: String,
        legacy: Session,
        caller: &Caller,
        bucket: Bucket,
        body: Bytes,
    ) -> Response<DualEraBody> {
        let owner = owner_of(caller);
        let created = fleet
            .create(
                &session_id,
                &legacy.facts(),
                &owner,
                &bucket.key(),
                self.legacy.session_grace,
                self.legacy.max_sessions,
                self.caps.of(&bucket),
            )
            .await;
        match created {
            Ok(Created::Yes) => {}
            Ok(Created::Full | Created::Taken) => return self.unavailable(TOO_MANY_SESSIONS),
            Err(e) => return self.store_unavailable(&e),
        }
        let http = self.shared_session(fleet, &session_id, legacy, bucket, caller);
        let Some(in_use) = self.admit(session_id.clone(), &http) else {
            http.end();
            // Its place in the fleet is given back; if that fails too, it expires.
            if let Err(e) = fleet.remove(&session_id, &owner).await {
                tracing::warn!(error = %e.0, "a refused legacy session stays in Redis until it expires");
            }
            return self.unavailable(TOO_MANY_SESSIONS);
        };
        self.start_relay(&http).await;
        let mut response = json_response(StatusCode::OK, body);
        if let Ok(value) = HeaderValue::from_str(&session_id) {
            response.headers_mut().insert(SESSION_ID, value);
        }
        drop(in_use);
        response
    }

    /// Shared session `id` of `caller`, in use until the guard drops: checked in the store
    /// (which refreshes its expiry), rebuilt here from its record if this instance does not
    /// hold it, its changing state (log level, subscriptions) taken from the record.
    #[allow(clippy::result_large_err)]
    pub(super) async fn find_shared(
        &self,
        fleet: &Arc<RedisSessions>,
        id: &str,
        caller: &Caller,
    ) -> Result<InUse, Response<DualEraBody>> {
        let record = match fleet.touch(id, self.legacy.session_idle_timeout).await {
            Ok(record) => record,
            Err(e) => return Err(self.store_unavailable(&e)),
        };
        let Some(record) = record else {
            // Deleted or expired, perhaps elsewhere: the copy here goes too.
            let gone = lock(&self.sessions).remove_if(id, |s| s.fleet.is_some());
            if let Some(gone) = gone {
                gone.end();
            }
            return Err(encode_not_found());
        };
        if record.owner != owner_of(caller) {
            return Err(encode_not_found());
        }
        let cached = lock(&self.sessions).take(id, |s| s.fleet.is_some() && s.belongs_to(caller));
        let session = match cached {
            Some(session) => {
                if let Some(legacy) = session.session.get() {
                    legacy.set_log_level(record.log_level);
                    if legacy.set_subscriptions(record.subscriptions) {
                        self.start_relay(&session).await;
                    }
                }
                session
            }
            None => self.rebuild(fleet, id, record, caller).await?,
        };
        session.touch();
        session.complete();
        Ok(session)
    }

    /// A local copy of a session another instance created, from its record.
    #[allow(clippy::result_large_err)]
    async fn rebuild(
        &self,
        fleet: &Arc<RedisSessions>,
        id: &str,
        record: Record,
        caller: &Caller,
    ) -> Result<InUse, Response<DualEraBody>> {
        let unreadable = || Unavailable("the stored session is unreadable".to_owned());
        let legacy =
            Session::restore(record.facts).ok_or_else(|| self.store_unavailable(&unreadable()))?;
        let bucket = Bucket::from_key(&record.bucket)
            .ok_or_else(|| self.store_unavailable(&unreadable()))?;
        legacy.set_log_level(record.log_level);
        legacy.set_subscriptions(record.subscriptions);
        let http = self.shared_session(fleet, id, legacy, bucket, caller);
        let admitted = {
            let mut table = lock(&self.sessions);
            // Another request may have rebuilt it meanwhile: that copy is the one.
            if table.contains(id) {
                table
                    .take(id, |s| s.fleet.is_some() && s.belongs_to(caller))
                    .map(|s| (s, Vec::new(), false))
                    .ok_or(())
            } else {
                table
                    .admit(id.to_owned(), &http, &self.caps)
                    .map(|(s, evicted)| (s, evicted, true))
                    .map_err(drop)
            }
        };
        let Ok((session, evicted, new)) = admitted else {
            http.end();
            return Err(self.unavailable(TOO_MANY_SESSIONS));
        };
        for old in evicted {
            old.end();
        }
        if new {
            tracing::debug!("a legacy session of another instance is now served here too");
            self.start_relay(&session).await;
        } else {
            http.end();
        }
        Ok(session)
    }

    /// Ends shared session `id` of `caller` in the store, then here.
    pub(super) async fn delete_shared(
        &self,
        fleet: &Arc<RedisSessions>,
        id: &str,
        caller: &Caller,
    ) -> Response<DualEraBody> {
        match fleet.remove(id, &owner_of(caller)).await {
            Ok(true) => {}
            Ok(false) => return encode_not_found(),
            Err(e) => return self.store_unavailable(&e),
        }
        let removed = lock(&self.sessions).remove_if(id, |s| s.fleet.is_some());
        if let Some(session) = removed {
            session.end();
        }
        super::empty(StatusCode::OK)
    }

    /// Resumes, from the store, stream `stream` of shared session `session` after event
    /// `seq`: a stream of another instance. A GET stream's replay goes on with this
    /// instance's GET stream; a request's stream ends with what was stored.
    pub(super) async fn resume_shared(
        &self,
        session: &InUse,
        stream: u64,
        seq: u64,
        pacing: Pacing,
    ) -> Response<DualEraBody> {
        let Some(fleet) = &session.fleet else {
            return refusal(
                StatusCode::BAD_REQUEST,
                "the stream of Last-Event-ID cannot be resumed",
            );
        };
        let events = match fleet.store.events_after(&fleet.id, stream, seq).await {
            Ok(events) => events,
            Err(e) => return self.store_unavailable(&e),
        };
        let replay =
            futures_util::stream::iter(events.into_iter().map(move |(seq, frame)| {
                Ok(http_body::Frame::data(sse_event(stream, seq, &frame)))
            }));
        // A GET stream is numbered at an instance's base (its low 32 bits are 0).
        let live = stream
            .is_multiple_of(super::store::RANGE)
            .then(|| session.get.reader(session.get.delivered(), None, pacing));
        match live {
            Some(live) => sse(replay.chain(live)),
            None => sse(replay),
        }
    }

    /// Forwards, through the store, the answers to server-to-client requests and the
    /// cancellations this instance had nothing waiting or running for.
    pub(super) async fn forward(
        &self,
        session: &HttpSession,
        answers: Vec<mcp_jsonrpc::Response>,
        cancels: Vec<RequestId>,
    ) -> Result<(), Response<DualEraBody>> {
        let Some(fleet) = &session.fleet else {
            return Ok(());
        };
        for response in answers {
            // Only this fleet's ids are forwarded: each names the instance that asked.
            let Some(RequestId::Integer(ask)) = &response.id else {
                continue;
            };
            let Ok(ask) = u64::try_from(*ask) else {
                continue;
            };
            if ask < super::store::RANGE || ask >> 32 == fleet.store.instance() {
                continue;
            }
            let id = RequestId::Integer(i64::try_from(ask).unwrap_or(i64::MAX));
            let frame = match &response.outcome {
                Ok(result) => encode_raw_result(&id, result),
                Err(error) => encode_error(Some(&id), error),
            };
            let frame = String::from_utf8_lossy(&frame).into_owned();
            if let Err(e) = fleet.store.forward_answer(&fleet.id, ask, frame).await {
                return Err(self.store_unavailable(&e));
            }
        }
        for request in cancels {
            if let Err(e) = fleet.store.forward_cancel(&fleet.id, &request).await {
                return Err(self.store_unavailable(&e));
            }
        }
        Ok(())
    }

    /// Writes what `method` changed in shared `session` (its log level, its
    /// subscriptions) to the store, before the request is answered; the error to answer
    /// with when it cannot be written.
    pub(super) async fn store_state(
        &self,
        session: &HttpSession,
        method: &str,
    ) -> Result<(), ErrorObject> {
        let (Some(fleet), Some(legacy)) = (&session.fleet, session.session.get()) else {
            return Ok(());
        };
        let (field, value) = match method {
            "logging/setLevel" => ("l", legacy.log_level().unwrap_or(Value::Null)),
            "resources/subscribe" | "resources/unsubscribe" => ("s", json!(legacy.subscriptions())),
            _ => return Ok(()),
        };
        match fleet.store.update(&fleet.id, field, &value).await {
            Ok(true) => Ok(()),
            Ok(false) => Err(ErrorObject::internal("the session ended")),
            Err(e) => {
                tracing::warn!(error = %e.0, method, "a legacy session's state could not be written to Redis");
                Err(ErrorObject::internal(format!(
                    "the session store (Redis) cannot be reached: {}",
                    e.0
                )))
            }
        }
    }
}

/// Keeps the shared sessions busy on this instance (a request running, a stream being
/// read) alive in the store, as a busy session never expires in memory: every third of
/// the idle timeout (at least every 100 ms, at most every minute), until the endpoint or
/// the store is gone.
pub(super) async fn keep_alive(table: Weak<Sessions>, store: Weak<RedisSessions>, idle: Duration) {
    let period = (idle / 3).clamp(Duration::from_millis(100), Duration::from_mins(1));
    let mut ticks = tokio::time::interval(period);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        let (Some(table), Some(store)) = (table.upgrade(), store.upgrade()) else {
            return;
        };
        let busy: Vec<Box<str>> = lock(&table)
            .values()
            .filter(|s| s.busy())
            .filter_map(|s| s.fleet.as_ref().map(|f| f.id.clone()))
            .collect();
        drop(table);
        for id in busy {
            if let Err(e) = store.touch(&id, idle).await {
                tracing::warn!(error = %e.0, "a busy legacy session's expiry could not be refreshed in Redis");
                break;
            }
        }
    }
}
