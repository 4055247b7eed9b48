//! The introspection verifier against a made-up introspection endpoint on 127.0.0.1 that
//! counts the calls it gets: what a token, good or bad, costs in outbound calls, at each
//! limit and past it. The verifier's clock stands still in tests until a test moves it, so
//! nothing depends on how fast a test runs.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Request, Response, StatusCode};
use http_body_util::{BodyExt as _, Full};
use mcp_transport_http::Authenticator as _;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

use super::{IntrospectionVerifier, IntrospectionVerifierBuilder, Key};
use crate::auth::{ClientAuth, ResourceServer, TokenError, TokenVerifier as _, unix_now};

const RESOURCE: &str = "https://mcp.example.com";
const ISSUER: &str = "https://auth.example.com";

/// The endpoint: answers each token from `table` (`{"active": false}` when absent) after a
/// permit of `gate` (which starts open), and counts the calls.
struct Endpoint {
    addr: SocketAddr,
    table: Arc<Mutex<HashMap<String, Value>>>,
    calls: Arc<AtomicUsize>,
    gate: Arc<Semaphore>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Endpoint {
    async fn start() -> Endpoint {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let table = Arc::new(Mutex::new(HashMap::new()));
        let calls = Arc::new(AtomicUsize::new(0));
        let gate = Arc::new(Semaphore::new(Semaphore::MAX_PERMITS));
        let state = (Arc::clone(&table), Arc::clone(&calls), Arc::clone(&gate));
        let task = mcp_test_support::http::serve_http1(listener, state, answer);
        Endpoint {
            addr,
            table,
            calls,
            gate,
            task,
        }
    }

    fn url(&self) -> String {
        format!("http://{}/introspect", self.addr)
    }

    fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }

    /// `token` is active, for this resource, for ten minutes.
    fn activate(&self, token: &str) {
        let answer = json!({
            "active": true, "aud": RESOURCE, "iss": ISSUER, "sub": format!("sub-{token}"),
            "scope": "files:read", "exp": unix_now() + 600,
        });
        self.table.lock().unwrap().insert(token.to_owned(), answer);
    }

    /// Holds every answer until [`open`](Self::open).
    fn close(&self) {
        self.gate.forget_permits(Semaphore::MAX_PERMITS);
    }

    fn open(&self) {
        self.gate.add_permits(Semaphore::MAX_PERMITS);
    }

    fn verifier(&self) -> IntrospectionVerifierBuilder {
        IntrospectionVerifier::builder(self.url(), ClientAuth::Bearer("rs-token".into()))
            .issuer(ISSUER)
    }
}

/// What the endpoint answers from: the table, the count of calls, the gate.
type State = (
    Arc<Mutex<HashMap<String, Value>>>,
    Arc<AtomicUsize>,
    Arc<Semaphore>,
);

async fn answer(
    request: Request<hyper::body::Incoming>,
    (table, calls, gate): State,
) -> Response<Full<Bytes>> {
    calls.fetch_add(1, Ordering::SeqCst);
    let body = request.into_body().collect().await.unwrap().to_bytes();
    let form = String::from_utf8(body.to_vec()).unwrap();
    let token = form
        .split('&')
        .find_map(|pair| pair.strip_prefix("token="))
        .unwrap_or_default()
        .to_owned();
    let _permit = gate.acquire().await.unwrap();
    let answer = table
        .lock()
        .unwrap()
        .get(&token)
        .cloned()
        .unwrap_or_else(|| json!({"active": false}));
    let mut response = Response::new(Full::new(Bytes::from(answer.to_string())));
    response
        .headers_mut()
        .insert("content-type", HeaderValue::from_static("application/json"));
    response
}

impl IntrospectionVerifier {
    /// Moves this verifier's clock forward.
    fn advance(&self, by: Duration) {
        let ms = u64::try_from(by.as_millis()).unwrap();
        self.inner.skew.fetch_add(ms, Ordering::SeqCst);
    }

    fn key(token: &str) -> Key {
        use sha2::{Digest as _, Sha256};
        Sha256::new()
            .chain_update(RESOURCE.as_bytes())
            .chain_update([0])
            .chain_update(token.as_bytes())
            .finalize()
            .into()
    }

    fn caches_accepted(&self, token: &str) -> bool {
        super::lock(&self.inner.cache)
            .accepted
            .contains(&Self::key(token))
    }

    /// How many verifications hold a seat at `token`'s flight (0 when there is none).
    fn seats(&self, token: &str) -> usize {
        super::lock(&self.inner.flights)
            .get(&Self::key(token))
            .map_or(0, |flight| Arc::strong_count(flight) - 1)
    }

    async fn check(&self, token: &str) -> Result<String, TokenError> {
        self.verify(token, RESOURCE)
            .await
            .map(|p| p.subject().unwrap_or_default().to_owned())
    }
}

/// Waits (bounded by count, not time) until `done` holds, letting the runtime's other tasks
/// run in between.
async fn until(mut done: impl FnMut() -> bool, what: &str) {
    for _ in 0..10_000 {
        if done() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    panic!("never: {what}");
}

#[tokio::test]
async fn concurrent_verifications_of_one_token_share_one_call() {
    const N: usize = 16;
    let endpoint = Endpoint::start().await;
    endpoint.activate("shared");
    let verifier = endpoint.verifier().build().unwrap();

    endpoint.close();
    let waiting: Vec<_> = (0..N)
        .map(|_| {
            let verifier = verifier.clone();
            tokio::spawn(async move { verifier.check("shared").await })
        })
        .collect();
    // Every verification is seated at the one flight, and its call has arrived.
    until(|| verifier.seats("shared") == N, "all seated").await;
    until(|| endpoint.calls() == 1, "the call arrived").await;
    endpoint.open();
    for task in waiting {
        assert_eq!(task.await.unwrap(), Ok("sub-shared".to_owned()));
    }
    assert_eq!(endpoint.calls(), 1, "one call for {N} verifications");
    // The flight is gone and the answer cached.
    assert_eq!(verifier.seats("shared"), 0);
    assert_eq!(verifier.check("shared").await, Ok("sub-shared".to_owned()));
    assert_eq!(endpoint.calls(), 1);

    // A flight whose verifications are all cancelled leaves nothing behind, and the next
    // verification of that token asks again.
    endpoint.close();
    let cancelled: Vec<_> = (0..3)
        .map(|_| {
            let verifier = verifier.clone();
            tokio::spawn(async move { verifier.check("abandoned").await })
        })
        .collect();
    until(|| verifier.seats("abandoned") == 3, "all seated").await;
    until(|| endpoint.calls() == 2, "the call arrived").await;
    for task in &cancelled {
        task.abort();
    }
    for task in cancelled {
        assert!(task.await.unwrap_err().is_cancelled());
    }
    assert_eq!(verifier.seats("abandoned"), 0);
    assert!(super::lock(&verifier.inner.flights).is_empty());
    endpoint.open();
    let calls = endpoint.calls();
    assert_eq!(
        verifier.check("abandoned").await,
        Err(TokenError::invalid("the token is not active"))
    );
    assert_eq!(endpoint.calls(), calls + 1);
}

#[tokio::test]
async fn a_refused_token_is_asked_once_within_the_negative_ttl() {
    let endpoint = Endpoint::start().await;
    // The default negative TTL: 30 s.
    let verifier = endpoint.verifier().build().unwrap();
    let inactive = Err(TokenError::invalid("the token is not active"));
    assert_eq!(verifier.check("garbage").await, inactive);
    assert_eq!(verifier.check("garbage").await, inactive);
    assert_eq!(endpoint.calls(), 1, "the second is answered from the cache");

    // Within its last millisecond it is still cached; at its end, asked again.
    verifier.advance(
        IntrospectionVerifier::DEFAULT_NEGATIVE_CACHE_TTL
            .checked_sub(Duration::from_millis(1))
            .unwrap(),
    );
    assert_eq!(verifier.check("garbage").await, inactive);
    assert_eq!(endpoint.calls(), 1);
    verifier.advance(Duration::from_millis(1));
    assert_eq!(verifier.check("garbage").await, inactive);
    assert_eq!(endpoint.calls(), 2);

    // Each refusal reason is cached the same way: a token for another audience.
    let elsewhere = json!({
        "active": true, "aud": "https://other.example.com", "sub": "someone",
        "exp": unix_now() + 600,
    });
    endpoint
        .table
        .lock()
        .unwrap()
        .insert("elsewhere".into(), elsewhere);
    for _ in 0..2 {
        assert_eq!(
            verifier.check("elsewhere").await,
            Err(TokenError::invalid(
                "the token was not issued for this resource"
            ))
        );
    }
    assert_eq!(endpoint.calls(), 3);

    // A configured TTL, and zero: every verification asks.
    let short = endpoint
        .verifier()
        .negative_cache_ttl(Duration::from_secs(5))
        .build()
        .unwrap();
    assert_eq!(short.check("garbage").await, inactive);
    short.advance(Duration::from_millis(4_999));
    assert_eq!(short.check("garbage").await, inactive);
    assert_eq!(endpoint.calls(), 4);
    short.advance(Duration::from_millis(1));
    assert_eq!(short.check("garbage").await, inactive);
    assert_eq!(endpoint.calls(), 5);
    let none = endpoint
        .verifier()
        .negative_cache_ttl(Duration::ZERO)
        .build()
        .unwrap();
    assert_eq!(none.check("garbage").await, inactive);
    assert_eq!(none.check("garbage").await, inactive);
    assert_eq!(endpoint.calls(), 7);
}

#[tokio::test]
async fn a_full_cache_drops_only_its_least_recently_used_answer() {
    let endpoint = Endpoint::start().await;
    for token in ["a", "b", "c", "d"] {
        endpoint.activate(token);
    }
    let verifier = endpoint.verifier().max_cache_entries(3).build().unwrap();
    for token in ["a", "b", "c"] {
        assert!(verifier.check(token).await.is_ok());
    }
    assert_eq!(endpoint.calls(), 3);
    // At the limit: three answers, all cached.
    for token in ["c", "b", "a"] {
        assert!(verifier.check(token).await.is_ok());
    }
    assert_eq!(endpoint.calls(), 3);

    // `c` is now the least recently used; `a` the most. One more drops `c` alone.
    assert!(verifier.check("d").await.is_ok());
    assert_eq!(endpoint.calls(), 4);
    assert!(!verifier.caches_accepted("c"));
    for token in ["a", "b", "d"] {
        assert!(verifier.caches_accepted(token), "{token}");
        assert!(verifier.check(token).await.is_ok());
    }
    assert_eq!(endpoint.calls(), 4, "a, b and d still cached");
    assert!(verifier.check("c").await.is_ok());
    assert_eq!(endpoint.calls(), 5, "c asked again");

    // Refused tokens have a cache of their own: a flood of them pushes no good answer out.
    for n in 0..10 {
        assert!(verifier.check(&format!("bad-{n}")).await.is_err());
    }
    assert_eq!(endpoint.calls(), 15);
    assert_eq!(super::lock(&verifier.inner.cache).refused.len(), 3);
    assert_eq!(super::lock(&verifier.inner.cache).accepted.len(), 3);
    for token in ["b", "d", "c"] {
        assert!(verifier.check(token).await.is_ok());
    }
    assert_eq!(endpoint.calls(), 15);

    // The default bound.
    let default = endpoint.verifier().build().unwrap();
    let cache = super::lock(&default.inner.cache);
    assert_eq!(
        cache.accepted.capacity,
        IntrospectionVerifier::DEFAULT_MAX_CACHE_ENTRIES
    );
    assert_eq!(cache.refused.capacity, 10_000);
}

#[test]
fn the_lru_evicts_in_order_of_use() {
    let key = |n: u8| [n; 32];
    let mut lru = super::Lru::new(2);
    lru.insert(key(1), "one");
    lru.insert(key(2), "two");
    assert_eq!(lru.get(&key(1)), Some(&"one"));
    lru.insert(key(3), "three");
    assert!(!lru.contains(&key(2)));
    assert!(lru.contains(&key(1)) && lru.contains(&key(3)));
    // Replacing an entry is a use, not a new entry.
    lru.insert(key(1), "uno");
    lru.insert(key(4), "four");
    assert!(!lru.contains(&key(3)));
    assert_eq!(lru.get(&key(1)), Some(&"uno"));
    lru.remove(&key(1));
    assert_eq!(lru.len(), 1);
    assert_eq!(lru.order.len(), 1);
}

#[tokio::test]
async fn past_the_rate_cap_an_unknown_token_is_unavailable_and_nothing_is_sent() {
    let endpoint = Endpoint::start().await;
    endpoint.activate("good");
    let verifier = endpoint
        .verifier()
        .introspection_rate(3, Duration::from_mins(1))
        .build()
        .unwrap();
    // At the cap: three calls, each answered.
    assert!(verifier.check("good").await.is_ok());
    assert!(verifier.check("bad-1").await.is_err());
    assert!(verifier.check("bad-2").await.is_err());
    assert_eq!(endpoint.calls(), 3);
    // Past it: an unknown token, good or bad, cannot be verified now, and no call is made.
    endpoint.activate("new");
    for token in ["new", "bad-3", "new"] {
        assert!(
            matches!(verifier.check(token).await, Err(TokenError::Unavailable(_))),
            "{token}"
        );
    }
    assert_eq!(endpoint.calls(), 3);
    // Cached answers still stand.
    assert_eq!(verifier.check("good").await, Ok("sub-good".to_owned()));
    assert!(matches!(
        verifier.check("bad-1").await,
        Err(TokenError::Invalid(_))
    ));
    assert_eq!(endpoint.calls(), 3);
    // One call's worth of time (a minute over three) earns one call.
    verifier.advance(Duration::from_secs(20));
    assert_eq!(verifier.check("new").await, Ok("sub-new".to_owned()));
    assert!(matches!(
        verifier.check("bad-3").await,
        Err(TokenError::Unavailable(_))
    ));
    assert_eq!(endpoint.calls(), 4);

    // The default: 100 calls at once, then none.
    let default = endpoint.verifier().build().unwrap();
    let calls = endpoint.calls();
    for n in 0..IntrospectionVerifier::DEFAULT_INTROSPECTION_RATE.0 {
        assert!(
            matches!(
                default.check(&format!("d-{n}")).await,
                Err(TokenError::Invalid(_))
            ),
            "{n}"
        );
    }
    assert!(matches!(
        default.check("one-more").await,
        Err(TokenError::Unavailable(_))
    ));
    assert_eq!(endpoint.calls(), calls + 100);
    assert_eq!(
        IntrospectionVerifier::DEFAULT_INTROSPECTION_RATE,
        (100, Duration::from_secs(1))
    );

    // A rate that allows nothing cannot be configured.
    for (calls, per) in [(0, Duration::from_secs(1)), (1, Duration::ZERO)] {
        assert!(
            endpoint
                .verifier()
                .introspection_rate(calls, per)
                .build()
                .is_err()
        );
    }
}

#[test]
fn the_bucket_earns_one_call_per_interval_up_to_its_capacity() {
    let start = std::time::Instant::now();
    let mut bucket = super::Bucket::new(2, Duration::from_secs(10), start);
    assert!(bucket.take(start));
    assert!(bucket.take(start));
    assert!(!bucket.take(start));
    // Just short of one interval (5 s): nothing; at it, one.
    assert!(!bucket.take(start + Duration::from_millis(4_999)));
    assert!(bucket.take(start + Duration::from_secs(5)));
    assert!(!bucket.take(start + Duration::from_secs(5)));
    // A long idle refills to the capacity, not past it.
    let later = start + Duration::from_hours(1);
    assert!(bucket.take(later));
    assert!(bucket.take(later));
    assert!(!bucket.take(later));
    // A clock that goes backwards earns nothing.
    assert!(!bucket.take(start));
}

#[tokio::test]
async fn an_absurd_exp_neither_overflows_nor_outlives_the_ttl() {
    let endpoint = Endpoint::start().await;
    let mut answer = json!({"active": true, "aud": RESOURCE, "sub": "far", "exp": u64::MAX});
    endpoint
        .table
        .lock()
        .unwrap()
        .insert("far".into(), answer.clone());
    let verifier = endpoint.verifier().build().unwrap();
    assert!(verifier.check("far").await.is_ok());
    verifier.advance(
        IntrospectionVerifier::DEFAULT_CACHE_TTL
            .checked_sub(Duration::from_millis(1))
            .unwrap(),
    );
    assert!(verifier.check("far").await.is_ok());
    assert_eq!(endpoint.calls(), 1, "cached within the TTL");
    verifier.advance(Duration::from_millis(1));
    assert!(verifier.check("far").await.is_ok());
    assert_eq!(endpoint.calls(), 2, "cached for the TTL only");
    // An `exp` sooner than the TTL ends the cached answer there.
    answer["exp"] = json!(unix_now() + 10);
    endpoint.table.lock().unwrap().insert("soon".into(), answer);
    assert!(verifier.check("soon").await.is_ok());
    // The wall clock may pass a second boundary between the answer and the cache's
    // reading of it, so the cached answer ends 9 to 10 s from now, never later.
    verifier.advance(Duration::from_secs(10));
    assert!(verifier.check("soon").await.is_ok());
    assert_eq!(endpoint.calls(), 4);
}

#[tokio::test]
async fn a_503_tells_the_client_nothing_of_why() {
    let endpoint = Endpoint::start().await;
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let unreachable = format!("http://{}/introspect", closed.local_addr().unwrap());
    drop(closed);
    let cases = [
        (
            "unreachable",
            IntrospectionVerifier::builder(&unreachable, ClientAuth::Bearer("rs".into()))
                .build()
                .unwrap(),
        ),
        (
            "rate spent",
            endpoint
                .verifier()
                .introspection_rate(1, Duration::from_hours(1))
                .build()
                .unwrap(),
        ),
    ];
    for (case, verifier) in cases {
        // Spend the one call of the limited verifier.
        let _ = verifier.check("first").await;
        let resource = ResourceServer::builder(RESOURCE)
            .authorization_server(ISSUER)
            .verifier(verifier)
            .build()
            .unwrap();
        let mut headers = HeaderMap::new();
        headers.insert(
            "authorization",
            HeaderValue::from_static("Bearer opaque-token"),
        );
        let Err(response) = resource.authenticate(&headers).await else {
            panic!("{case}: accepted");
        };
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE, "{case}");
        let body: Value = serde_json::from_slice(response.body()).unwrap();
        assert_eq!(
            body,
            json!({
                "error": "temporarily_unavailable",
                "error_description": crate::auth::challenge::UNAVAILABLE,
            }),
            "{case}"
        );
        let text = String::from_utf8_lossy(response.body());
        for internal in ["127.0.0.1", "introspect", "refused", "rate", "connect"] {
            assert!(!text.contains(internal), "{case}: {internal} in {text}");
        }
    }
}
