//! The client's authorization seam against a scripted server: the authorizer's header on
//! every request, challenges handed to it, the refused request re-sent with the new
//! header, and what the caller sees when the authorizer gives up or fails; headers made
//! for each attempt, every response shown to the authorizer, and the challenges a request
//! met before.

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::post;
use http::{HeaderValue, Method};
use mcp_transport_http::{
    AuthFuture, Authorizer, AuthorizerError, Challenge, Error, HttpClient, HttpClientConfig,
    RawRequest, RequestHeaders,
};
use serde_json::json;

/// The server: no token → 401 with a `resource_metadata` challenge; `Bearer one` → 403
/// `insufficient_scope`; `Bearer two` → a JSON-RPC result. It records every
/// `Authorization` it sees.
async fn start(seen: Arc<Mutex<Vec<Option<String>>>>) -> String {
    let app = Router::new().route(
        "/mcp",
        post(move |headers: HeaderMap| {
            let seen = Arc::clone(&seen);
            async move {
                let auth = headers
                    .get(header::AUTHORIZATION)
                    .map(|v| v.to_str().unwrap().to_owned());
                seen.lock().unwrap().push(auth.clone());
                match auth.as_deref() {
                    None => (
                        StatusCode::UNAUTHORIZED,
                        [(
                            header::WWW_AUTHENTICATE,
                            r#"Bearer resource_metadata="http://x/.well-known/oauth-protected-resource""#,
                        )],
                        r#"{"error":"invalid_token"}"#,
                    )
                        .into_response(),
                    Some("Bearer one") => (
                        StatusCode::FORBIDDEN,
                        [(
                            header::WWW_AUTHENTICATE,
                            r#"Bearer error="insufficient_scope", scope="write""#,
                        )],
                        "",
                    )
                        .into_response(),
                    Some(_) => (
                        [(header::CONTENT_TYPE, "application/json")],
                        r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
                    )
                        .into_response(),
                }
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    url
}

/// One challenge as the authorizer saw it: status, `WWW-Authenticate` values, whether a
/// credential was sent, the attempt number.
type Seen = (u16, Vec<String>, bool, u32);

/// Hands out the tokens of `script` one challenge at a time, recording each challenge;
/// gives up when the script is exhausted, or fails if `fail` is set.
#[derive(Debug, Default)]
struct Scripted {
    script: Mutex<Vec<&'static str>>,
    current: Mutex<Option<&'static str>>,
    challenges: Mutex<Vec<Seen>>,
    fail: bool,
}

impl Authorizer for Scripted {
    fn authorization(&self) -> Option<HeaderValue> {
        self.current
            .lock()
            .unwrap()
            .map(|t| HeaderValue::from_str(&format!("Bearer {t}")).unwrap())
    }

    fn challenged<'a>(
        &'a self,
        challenge: &'a Challenge,
    ) -> AuthFuture<'a, Result<bool, AuthorizerError>> {
        Box::pin(async move {
            self.challenges.lock().unwrap().push((
                challenge.status.as_u16(),
                challenge.www_authenticate.clone(),
                challenge.sent.is_some(),
                challenge.attempt,
            ));
            if self.fail {
                return Err("the authorization server is down".into());
            }
            let mut script = self.script.lock().unwrap();
            if script.is_empty() {
                return Ok(false);
            }
            *self.current.lock().unwrap() = Some(script.remove(0));
            Ok(true)
        })
    }
}

fn client(url: &str, authorizer: &Arc<Scripted>) -> HttpClient {
    let config = HttpClientConfig::default()
        .header(
            header::AUTHORIZATION,
            HeaderValue::from_static("Bearer configured"),
        )
        .authorizer(Arc::clone(authorizer) as Arc<dyn Authorizer>);
    HttpClient::new(url, config).unwrap()
}

fn frame() -> bytes::Bytes {
    mcp_jsonrpc::encode_request(&1.into(), "tools/list", Some(&json!({}))).unwrap()
}

/// A `tools/list` through `http`, which must be answered with a response.
async fn lists(http: &HttpClient) {
    let mut stream = http
        .request(frame(), RequestHeaders::new("2026-07-28", "tools/list"))
        .await
        .unwrap();
    assert!(matches!(
        stream.next().await,
        Some(Ok(mcp_jsonrpc::Message::Response(_)))
    ));
}

/// A `tools/list` through `http`, which must fail: the error.
async fn refused(http: &HttpClient) -> Error {
    http.request(frame(), RequestHeaders::new("2026-07-28", "tools/list"))
        .await
        .unwrap_err()
}

#[tokio::test]
async fn a_challenged_request_is_sent_again_with_the_new_header() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let url = start(Arc::clone(&seen)).await;
    let authorizer = Arc::new(Scripted {
        script: Mutex::new(vec!["one", "two"]),
        ..Scripted::default()
    });
    let http = client(&url, &authorizer);
    lists(&http).await;
    // The authorizer owns the header: the configured one is not sent; then each token.
    assert_eq!(
        *seen.lock().unwrap(),
        [
            None,
            Some("Bearer one".to_owned()),
            Some("Bearer two".to_owned())
        ]
    );
    let challenges = authorizer.challenges.lock().unwrap().clone();
    assert_eq!(challenges.len(), 2);
    assert_eq!(challenges[0].0, 401);
    assert!(challenges[0].1[0].contains("resource_metadata="));
    assert_eq!((challenges[0].2, challenges[0].3), (false, 0));
    assert_eq!(challenges[1].0, 403);
    assert!(challenges[1].1[0].contains("insufficient_scope"));
    assert_eq!((challenges[1].2, challenges[1].3), (true, 1));

    // The raw seam (legacy sessions) goes through the same door, with the token now held.
    let response = http
        .send(
            RawRequest::new(Method::POST)
                .header(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                )
                .body(frame()),
        )
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        seen.lock().unwrap().last().unwrap().as_deref(),
        Some("Bearer two")
    );
}

#[tokio::test]
async fn giving_up_or_failing_surfaces_the_challenge() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let url = start(Arc::clone(&seen)).await;

    // The authorizer obtains a token that lacks a scope, then gives up.
    let authorizer = Arc::new(Scripted {
        script: Mutex::new(vec!["one"]),
        ..Scripted::default()
    });
    let err = refused(&client(&url, &authorizer)).await;
    let Error::Unauthorized {
        status,
        www_authenticate,
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(*status, StatusCode::FORBIDDEN);
    assert_eq!(
        www_authenticate,
        &[r#"Bearer error="insufficient_scope", scope="write""#]
    );
    assert!(err.is_unauthorized());
    assert!(err.to_string().contains("insufficient_scope"), "{err}");

    // An authorizer that fails: the failure is the request's.
    let authorizer = Arc::new(Scripted {
        fail: true,
        ..Scripted::default()
    });
    let err = client(&url, &authorizer)
        .notify(frame(), RequestHeaders::new("2026-07-28", "tools/list"))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::Authorization(e) if e.to_string().contains("down")),
        "{err:?}"
    );

    // No authorizer at all: a 401 is a typed refusal, not a status error.
    let err = HttpClient::new(&url, HttpClientConfig::default())
        .unwrap()
        .send(RawRequest::new(Method::POST).body(frame()))
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::Unauthorized {
                status: StatusCode::UNAUTHORIZED,
                ..
            }
        ),
        "{err:?}"
    );
}

#[tokio::test]
async fn an_authorizer_that_never_gives_up_is_stopped() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let url = start(Arc::clone(&seen)).await;
    let authorizer = Arc::new(Scripted {
        script: Mutex::new(vec!["one"; 100]),
        ..Scripted::default()
    });
    let err = refused(&client(&url, &authorizer)).await;
    assert!(matches!(err, Error::Unauthorized { .. }), "{err:?}");
    assert_eq!(
        seen.lock().unwrap().len(),
        mcp_transport_http::MAX_CHALLENGES as usize
    );
}

/// Holds `one` (which the server refuses) until `prepare` renews it to `two`; records how
/// often it was asked to prepare and to answer a challenge.
#[derive(Debug)]
struct Renewing {
    current: Mutex<&'static str>,
    renewals: Mutex<u32>,
    challenges: Mutex<u32>,
}

impl Authorizer for Renewing {
    fn authorization(&self) -> Option<HeaderValue> {
        let token = *self.current.lock().unwrap();
        Some(HeaderValue::from_str(&format!("Bearer {token}")).unwrap())
    }

    fn prepare(&self) -> Option<AuthFuture<'_, ()>> {
        // Only a token about to expire (`one`) needs work; `two` is fresh.
        if *self.current.lock().unwrap() != "one" {
            return None;
        }
        Some(Box::pin(async move {
            tokio::task::yield_now().await;
            *self.renewals.lock().unwrap() += 1;
            *self.current.lock().unwrap() = "two";
        }))
    }

    fn challenged<'a>(
        &'a self,
        _challenge: &'a Challenge,
    ) -> AuthFuture<'a, Result<bool, AuthorizerError>> {
        Box::pin(async move {
            *self.challenges.lock().unwrap() += 1;
            Ok(false)
        })
    }
}

#[tokio::test]
async fn a_token_renewed_before_the_request_is_the_one_sent() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let url = start(Arc::clone(&seen)).await;
    let authorizer = Arc::new(Renewing {
        current: Mutex::new("one"),
        renewals: Mutex::new(0),
        challenges: Mutex::new(0),
    });
    let http = HttpClient::new(
        &url,
        HttpClientConfig::default().authorizer(Arc::clone(&authorizer) as Arc<dyn Authorizer>),
    )
    .unwrap();
    for _ in 0..2 {
        lists(&http).await;
    }
    // The stale token was never sent, nothing was refused, and it was renewed once.
    assert_eq!(
        *seen.lock().unwrap(),
        [Some("Bearer two".to_owned()), Some("Bearer two".to_owned())]
    );
    assert_eq!(*authorizer.challenges.lock().unwrap(), 0);
    assert_eq!(*authorizer.renewals.lock().unwrap(), 1);
}

/// An authorizer whose headers are bound to each request (a proof per attempt, like
/// DPoP), that learns a value from each response, and that retries a refusal only once.
#[derive(Debug, Default)]
struct PerRequest {
    /// How many proofs were made.
    made: Mutex<u32>,
    /// The `x-next` of each response, with its status.
    responses: Mutex<Vec<(u16, Option<String>)>>,
    /// The `earlier` of each challenge.
    earlier: Mutex<Vec<Vec<Vec<String>>>>,
    /// `headers` fails.
    broken: bool,
}

impl Authorizer for PerRequest {
    fn authorization(&self) -> Option<HeaderValue> {
        Some(HeaderValue::from_static("Proof token"))
    }

    fn headers(&self, method: &Method, url: &http::Uri) -> Result<HeaderMap, AuthorizerError> {
        if self.broken {
            return Err("no key to sign with".into());
        }
        let mut made = self.made.lock().unwrap();
        *made += 1;
        let next = self
            .responses
            .lock()
            .unwrap()
            .last()
            .and_then(|r| r.1.clone());
        let mut headers = HeaderMap::new();
        headers.insert(header::AUTHORIZATION, self.authorization().unwrap());
        let proof = format!(
            "{method} {} #{made} {}",
            url.path(),
            next.unwrap_or_default()
        );
        headers.insert("x-proof", HeaderValue::from_str(proof.trim()).unwrap());
        Ok(headers)
    }

    fn responded(&self, _url: &http::Uri, status: StatusCode, headers: &HeaderMap) {
        let next = headers
            .get("x-next")
            .map(|v| v.to_str().unwrap().to_owned());
        self.responses.lock().unwrap().push((status.as_u16(), next));
    }

    fn challenged<'a>(
        &'a self,
        challenge: &'a Challenge,
    ) -> AuthFuture<'a, Result<bool, AuthorizerError>> {
        Box::pin(async move {
            self.earlier.lock().unwrap().push(challenge.earlier.clone());
            Ok(challenge.earlier.is_empty())
        })
    }
}

/// The `x-proof` and `x-configured` of each request.
type Proofs = Arc<Mutex<Vec<(String, Option<String>)>>>;

/// A server that wants `x-proof` to carry the `x-next` value it handed out with its last
/// refusal (a new one each time; never satisfied unless `accept`), recording the `x-proof`
/// and `x-configured` it sees.
async fn start_per_request(seen: Proofs, accept: bool) -> String {
    let app = Router::new().route(
        "/mcp",
        post(move |headers: HeaderMap| {
            let seen = Arc::clone(&seen);
            async move {
                let proof = headers["x-proof"].to_str().unwrap().to_owned();
                let configured = headers
                    .get("x-configured")
                    .map(|v| v.to_str().unwrap().to_owned());
                let mut seen = seen.lock().unwrap();
                seen.push((proof.clone(), configured));
                let wanted = format!("n{}", seen.len() - 1);
                if accept && seen.len() > 1 && proof.ends_with(&wanted) {
                    return (
                        [(header::CONTENT_TYPE, "application/json")],
                        r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
                    )
                        .into_response();
                }
                (
                    StatusCode::UNAUTHORIZED,
                    [
                        (header::WWW_AUTHENTICATE, "Proof error=\"stale\"".to_owned()),
                        (
                            header::HeaderName::from_static("x-next"),
                            format!("n{}", seen.len()),
                        ),
                    ],
                    "",
                )
                    .into_response()
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    url
}

#[tokio::test]
async fn the_authorizer_supplies_headers_per_attempt_and_sees_every_response() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let url = start_per_request(Arc::clone(&seen), true).await;
    let authorizer = Arc::new(PerRequest::default());
    let http = HttpClient::new(
        &url,
        HttpClientConfig::default()
            .header(
                header::HeaderName::from_static("x-proof"),
                HeaderValue::from_static("configured proof"),
            )
            .header(
                header::HeaderName::from_static("x-configured"),
                HeaderValue::from_static("kept"),
            )
            .authorizer(Arc::clone(&authorizer) as Arc<dyn Authorizer>),
    )
    .unwrap();
    lists(&http).await;
    // A new proof per attempt, carrying what the refusal handed out; the authorizer's
    // header replaced the configured one of the same name, the others are kept.
    assert_eq!(
        *seen.lock().unwrap(),
        [
            ("POST /mcp #1".to_owned(), Some("kept".to_owned())),
            ("POST /mcp #2 n1".to_owned(), Some("kept".to_owned()))
        ]
    );
    assert_eq!(
        *authorizer.responses.lock().unwrap(),
        [(401, Some("n1".to_owned())), (200, None)]
    );
    assert_eq!(
        *authorizer.earlier.lock().unwrap(),
        [Vec::<Vec<String>>::new()]
    );

    // A server that always wants a newer value: the authorizer retries once, as `earlier`
    // lets it, and the second refusal is the caller's.
    let seen = Arc::new(Mutex::new(Vec::new()));
    let url = start_per_request(Arc::clone(&seen), false).await;
    let authorizer = Arc::new(PerRequest::default());
    let http = HttpClient::new(
        &url,
        HttpClientConfig::default().authorizer(Arc::clone(&authorizer) as Arc<dyn Authorizer>),
    )
    .unwrap();
    let err = refused(&http).await;
    assert!(matches!(err, Error::Unauthorized { .. }), "{err:?}");
    let earlier = authorizer.earlier.lock().unwrap().clone();
    assert_eq!(
        earlier,
        [Vec::new(), vec![vec![r#"Proof error="stale""#.to_owned()]]]
    );
    assert_eq!(seen.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn headers_that_cannot_be_made_fail_the_request_before_it_is_sent() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let url = start_per_request(Arc::clone(&seen), true).await;
    let authorizer = Arc::new(PerRequest {
        broken: true,
        ..PerRequest::default()
    });
    let http = HttpClient::new(
        &url,
        HttpClientConfig::default().authorizer(Arc::clone(&authorizer) as Arc<dyn Authorizer>),
    )
    .unwrap();
    let err = refused(&http).await;
    assert!(
        matches!(&err, Error::Authorization(e) if e.to_string() == "no key to sign with"),
        "{err:?}"
    );
    assert!(seen.lock().unwrap().is_empty());
    assert!(authorizer.responses.lock().unwrap().is_empty());
}
