//! Signing in to protected HTTP servers (<https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization>), through
//! `mcp-client`'s OAuth client: the `--oauth-*` flags, the credential file, and the
//! loopback redirect listener that receives the authorization server's redirect.
//!
//! The authorization URL is printed on stderr for the user to open; it is never given to a
//! shell or a browser-launching command. The listener binds `127.0.0.1` only, answers only
//! `GET /callback` carrying the flow's `state`, and gives up after [`SIGN_IN_TIMEOUT`].

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use mcp_client::auth::{
    AuthorizationRequest, AuthorizationResponse, DpopPolicy, FileStore, Interaction,
    InteractionFuture, NetworkPolicy, OAuthClient, OAuthConfig, PreRegistered, is_loopback_host,
};
use mcp_transport_http::{Authorizer, HttpClient, HttpClientConfig, RawRequest};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpListener;

use crate::Error;

/// How long the listener waits for the user to finish signing in.
pub(crate) const SIGN_IN_TIMEOUT: Duration = Duration::from_mins(5);
/// The longest request head the listener reads.
const MAX_REQUEST: usize = 16 << 10;

/// How `mcp` signs in to a server that answers `401` (HTTP targets only).
#[derive(Args, Debug, Default, Clone, PartialEq, Eq)]
#[command(next_help_heading = "Authorization (OAuth 2.1, for protected HTTP servers)")]
pub(crate) struct OAuthArgs {
    /// Never sign in: a server that requires authorization is an error.
    #[arg(long)]
    pub(crate) no_auth: bool,
    /// A client id registered in advance with the server's authorization server (use with
    /// --oauth-issuer; the secret, if any, from --oauth-client-secret or
    /// $MCP_OAUTH_CLIENT_SECRET).
    #[arg(long, value_name = "ID", requires = "oauth_issuer")]
    pub(crate) oauth_client_id: Option<String>,
    /// The secret of --oauth-client-id (prefer $MCP_OAUTH_CLIENT_SECRET: arguments are
    /// visible to other local users).
    #[arg(long, value_name = "SECRET")]
    pub(crate) oauth_client_secret: Option<String>,
    /// The issuer --oauth-client-id was registered with; it is used with that
    /// authorization server only.
    #[arg(long, value_name = "URL")]
    pub(crate) oauth_issuer: Option<String>,
    /// The https URL of a Client ID Metadata Document describing this client, used as its
    /// client id where the authorization server supports them (otherwise `mcp` registers
    /// dynamically).
    #[arg(long, value_name = "URL")]
    pub(crate) oauth_client_metadata_url: Option<String>,
    /// The port of the loopback redirect listener (default: any free port; fix one for an
    /// authorization server that requires an exact redirect URI).
    #[arg(long, value_name = "PORT")]
    pub(crate) oauth_port: Option<u16>,
    /// Where registrations and tokens are kept (default: credentials.json in the user's
    /// config directory under `mcp`, such as ~/.config/mcp/credentials.json).
    #[arg(long, value_name = "FILE")]
    pub(crate) oauth_store: Option<PathBuf>,
    /// Let the OAuth requests reach private and link-local addresses (an authorization
    /// server on an internal network). Loopback is allowed, over plain http too, only
    /// when the server itself is on a loopback address.
    #[arg(long)]
    pub(crate) oauth_allow_private: bool,
    /// Bind tokens to a key with DPoP (RFC 9449) where the authorization server offers it:
    /// a stolen token is then of no use without the key. The key lives in memory only, so
    /// a bound token is not reused by the next run (each run signs in again).
    #[arg(long)]
    pub(crate) oauth_dpop: bool,
}

impl OAuthArgs {
    /// These options, each one not given taken from `before` (the same options given
    /// before the command's name).
    pub(crate) fn or(self, before: Self) -> Self {
        Self {
            no_auth: self.no_auth || before.no_auth,
            oauth_client_id: self.oauth_client_id.or(before.oauth_client_id),
            oauth_client_secret: self.oauth_client_secret.or(before.oauth_client_secret),
            oauth_issuer: self.oauth_issuer.or(before.oauth_issuer),
            oauth_client_metadata_url: self
                .oauth_client_metadata_url
                .or(before.oauth_client_metadata_url),
            oauth_port: self.oauth_port.or(before.oauth_port),
            oauth_store: self.oauth_store.or(before.oauth_store),
            oauth_allow_private: self.oauth_allow_private || before.oauth_allow_private,
            oauth_dpop: self.oauth_dpop || before.oauth_dpop,
        }
    }

    /// The OAuth client for the HTTP server at `url`, or `None` with `--no-auth`.
    pub(crate) async fn client(&self, url: &str) -> Result<Option<OAuthClient>, Error> {
        if self.no_auth {
            return Ok(None);
        }
        let interaction = Loopback::bind(self.oauth_port).await?;
        let mut network = NetworkPolicy::default();
        // A server on this machine may have its authorization server here too; a remote
        // one may not point the client at local services.
        network.allow_loopback = url
            .parse::<http::Uri>()
            .ok()
            .and_then(|u| u.host().map(is_loopback_host))
            .unwrap_or(false);
        network.allow_private = self.oauth_allow_private;
        let store = match &self.oauth_store {
            Some(path) => path.clone(),
            // The same file a host reads stored tokens from (`"grant": "stored"`).
            None => mcp_host::default_credential_store().ok_or_else(|| {
                Error::Arguments(
                    "no config directory for the credential file: pass --oauth-store FILE"
                        .to_owned(),
                )
            })?,
        };
        let mut config = OAuthConfig::authorization_code(url, Arc::new(interaction))
            .client_name(concat!("mcp (mcp-rs CLI ", env!("CARGO_PKG_VERSION"), ")"))
            .network(network)
            .store(Arc::new(FileStore::new(store)));
        if self.oauth_dpop {
            config = config.dpop(DpopPolicy::IfSupported);
        }
        if let Some(metadata_url) = &self.oauth_client_metadata_url {
            config = config.client_metadata_url(metadata_url);
        }
        if let (Some(id), Some(issuer)) = (&self.oauth_client_id, &self.oauth_issuer) {
            let secret = self
                .oauth_client_secret
                .clone()
                .or_else(|| std::env::var("MCP_OAUTH_CLIENT_SECRET").ok());
            config = config.pre_registered(PreRegistered::new(issuer, id, secret));
        }
        OAuthClient::new(config).map(Some).map_err(Error::Client)
    }
}

/// The user-interaction step over a loopback listener (RFC 8252 §7.3).
#[derive(Debug)]
pub(crate) struct Loopback {
    listener: tokio::sync::Mutex<TcpListener>,
    redirect_uri: String,
}

impl Loopback {
    /// Binds `127.0.0.1:port` (any free port for `None`).
    pub(crate) async fn bind(port: Option<u16>) -> Result<Loopback, Error> {
        let listener = TcpListener::bind(("127.0.0.1", port.unwrap_or(0)))
            .await
            .map_err(|e| Error::Arguments(format!("cannot listen for the OAuth redirect: {e}")))?;
        let port = listener
            .local_addr()
            .map_err(|e| Error::Arguments(format!("cannot listen for the OAuth redirect: {e}")))?
            .port();
        Ok(Loopback {
            listener: tokio::sync::Mutex::new(listener),
            redirect_uri: format!("http://127.0.0.1:{port}/callback"),
        })
    }

    /// Serves requests until one is `GET /callback?…state=<state>…`, answering the others
    /// with 404, and returns its parameters.
    async fn wait(&self, state: &str) -> std::io::Result<AuthorizationResponse> {
        let listener = self.listener.lock().await;
        loop {
            let (mut socket, _) = listener.accept().await?;
            let Some(target) = read_target(&mut socket).await else {
                continue;
            };
            let response = target
                .strip_prefix("/callback")
                .filter(|rest| rest.is_empty() || rest.starts_with('?'))
                .map(|rest| AuthorizationResponse::from_query(rest.trim_start_matches('?')));
            match response {
                Some(response) if response.get("state") == Some(state) => {
                    let page = if response.get("code").is_some() {
                        "Signed in. You can close this tab and return to the terminal."
                    } else {
                        "Sign-in did not complete. See the terminal for details."
                    };
                    let _ = reply(&mut socket, "200 OK", page).await;
                    return Ok(response);
                }
                _ => {
                    let _ = reply(&mut socket, "404 Not Found", "Not found.").await;
                }
            }
        }
    }
}

/// The request target of `GET <target> HTTP/1.1`, if the head is one and fits the bound.
async fn read_target(socket: &mut tokio::net::TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let mut buf = [0u8; 2048];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = tokio::time::timeout(Duration::from_secs(10), socket.read(&mut buf))
            .await
            .ok()?
            .ok()?;
        if n == 0 || head.len() + n > MAX_REQUEST {
            return None;
        }
        head.extend_from_slice(&buf[..n]);
    }
    let line = String::from_utf8_lossy(&head);
    let mut parts = line.lines().next()?.split(' ');
    (parts.next()? == "GET").then_some(())?;
    parts.next().map(str::to_owned)
}

async fn reply(
    socket: &mut tokio::net::TcpStream,
    status: &str,
    text: &str,
) -> std::io::Result<()> {
    let body = format!("<!doctype html><title>mcp</title><p>{text}</p>\n");
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    socket.write_all(response.as_bytes()).await?;
    socket.shutdown().await
}

impl Interaction for Loopback {
    fn redirect_uri(&self) -> String {
        self.redirect_uri.clone()
    }

    fn authorize<'a>(&'a self, request: &'a AuthorizationRequest) -> InteractionFuture<'a> {
        Box::pin(async move {
            // Printed, never opened through a shell: the URL comes from a remote server.
            eprintln!(
                "\nThis server requires you to sign in at {}.\nOpen this URL in your browser:\n\n  {}\n\nWaiting for the redirect to {} …",
                request.issuer, request.url, self.redirect_uri
            );
            let response = tokio::time::timeout(SIGN_IN_TIMEOUT, self.wait(&request.state))
                .await
                .map_err(|_| format!("no sign-in within {} s", SIGN_IN_TIMEOUT.as_secs()))??;
            eprintln!("Signed in.");
            Ok(response)
        })
    }
}

/// Signs in before connecting when no token is held yet: one `server/discover` POST with
/// the authorizer and no timeout, so that a `401` runs the interactive flow now, at the
/// user's pace, rather than inside the connection's probe and request timeouts. Its
/// answer is not used; an OAuth failure is reported, anything else is left to the
/// connection.
pub(crate) async fn sign_in_if_needed(
    url: &str,
    config: &HttpClientConfig,
    oauth: &Arc<OAuthClient>,
) -> Result<(), Error> {
    if oauth.authorization().is_some() {
        return Ok(());
    }
    let http = HttpClient::new(
        url,
        config
            .clone()
            .authorizer(Arc::clone(oauth) as Arc<dyn Authorizer>),
    )
    .map_err(|e| Error::Client(e.into()))?;
    let body = serde_json::json!({
        "jsonrpc": "2.0", "id": 0, "method": "server/discover",
        "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "mcp", "version": env!("CARGO_PKG_VERSION")}
        }}
    });
    let request = RawRequest::new(http::Method::POST)
        .header(
            http::header::CONTENT_TYPE,
            http::HeaderValue::from_static("application/json"),
        )
        .header(
            http::header::ACCEPT,
            http::HeaderValue::from_static("application/json, text/event-stream"),
        )
        .header(
            http::HeaderName::from_static("mcp-protocol-version"),
            http::HeaderValue::from_static("2026-07-28"),
        )
        .header(
            http::HeaderName::from_static("mcp-method"),
            http::HeaderValue::from_static("server/discover"),
        )
        .body(body.to_string().into());
    match http.send(request).await {
        Err(e @ mcp_transport_http::Error::Authorization(_)) => Err(Error::Client(e.into())),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn get(port: u16, target: &str) -> String {
        let mut socket = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .unwrap();
        socket
            .write_all(format!("GET {target} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes())
            .await
            .unwrap();
        let mut out = String::new();
        socket.read_to_string(&mut out).await.unwrap();
        out
    }

    #[tokio::test]
    async fn the_listener_returns_the_redirect_with_its_state_only() {
        let loopback = Loopback::bind(None).await.unwrap();
        let port: u16 = loopback
            .redirect_uri()
            .trim_start_matches("http://127.0.0.1:")
            .trim_end_matches("/callback")
            .parse()
            .unwrap();
        let waiting = tokio::spawn(async move { loopback.wait("s1").await.unwrap() });
        assert!(get(port, "/favicon.ico").await.starts_with("HTTP/1.1 404"));
        assert!(
            get(port, "/callback?code=x&state=other")
                .await
                .starts_with("HTTP/1.1 404")
        );
        assert!(
            get(port, "/callback?code=c%2B1&state=s1&iss=https%3A%2F%2Fas")
                .await
                .starts_with("HTTP/1.1 200")
        );
        let response = waiting.await.unwrap();
        assert_eq!(response.get("code"), Some("c+1"));
        assert_eq!(response.get("iss"), Some("https://as"));
    }
}
