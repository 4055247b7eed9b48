//! The client's authorization seam against a scripted server: the authorizer's header on
//! every request, challenges handed to it, the refused request re-sent with the new
//! header, and what the caller sees when the authorizer gives up or fails.

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

#[tokio::test]
async fn a_challenged_request_is_sent_again_with_the_new_header() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let url = start(Arc::clone(&seen)).await;
    let authorizer = Arc::new(Scripted {
        script: Mutex::new(vec!["one", "two"]),
        ..Scripted::default()
    });
    let http = client(&url, &authorizer);
    let mut stream = http
        .request(frame(), RequestHeaders::new("2026-07-28", "tools/list"))
        .await
        .unwrap();
    assert!(matches!(
        stream.next().await,
        Some(Ok(mcp_jsonrpc::Message::Response(_)))
    ));
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
    let err = client(&url, &authorizer)
        .request(frame(), RequestHeaders::new("2026-07-28", "tools/list"))
        .await
        .unwrap_err();
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
    let err = client(&url, &authorizer)
        .request(frame(), RequestHeaders::new("2026-07-28", "tools/list"))
        .await
        .unwrap_err();
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
        let mut stream = http
            .request(frame(), RequestHeaders::new("2026-07-28", "tools/list"))
            .await
            .unwrap();
        assert!(matches!(
            stream.next().await,
            Some(Ok(mcp_jsonrpc::Message::Response(_)))
        ));
    }
    // The stale token was never sent, nothing was refused, and it was renewed once.
    assert_eq!(
        *seen.lock().unwrap(),
        [Some("Bearer two".to_owned()), Some("Bearer two".to_owned())]
    );
    assert_eq!(*authorizer.challenges.lock().unwrap(), 0);
    assert_eq!(*authorizer.renewals.lock().unwrap(), 1);
}
