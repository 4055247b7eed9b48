//! The dual-era client: one [`mcp_client::Client`] API, any server.
//!
//! [`Connector`] wraps a [`ClientBuilder`] (with the user's elicitation, sampling and roots
//! handlers) and connects it to a server of either era:
//!
//! - It detects the era as <https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning> and the Backward
//!   Compatibility sections of <https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/stdio> and
//!   <https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http> say. Over stdio a `server/discover` probe carrying modern
//!   `_meta` decides: a `DiscoverResult` or a recognized modern error (-32022 with its
//!   `supported` list, -32021, -32020) means modern, any other error or no answer within
//!   the probe timeout means legacy. Over HTTP a modern `server/discover` POST decides
//!   (see the `http` module). The verdict holds for the connection (one server process,
//!   one HTTP session); a [`VerdictCache`] remembers HTTP verdicts by URL across
//!   connections and forgets one that fails, so that the server is probed again. The
//!   user can pin an era or a version instead ([`EraChoice`]). A server the client
//!   owns ([`Connector::spawn_stdio`]) is started again after a crash and probed again,
//!   so a new process that speaks another era is still reached.
//! - A legacy server gets the handshake of <https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle>:
//!   `initialize` offering the newest legacy revision (2025-11-25), accepting whichever of
//!   2025-11-25, 2025-06-18, 2025-03-26 or 2024-11-05 the server answers with, then
//!   `notifications/initialized`.
//! - The legacy session then sits behind the same client API, through the client core's
//!   era-neutral seams ([`mcp_client::CustomTransport`], [`mcp_client::InputHandlers`],
//!   [`mcp_client::ListenRouter`]): each modern request loses its modern `_meta` keys,
//!   each legacy result gains `resultType: "complete"`, `server/discover` is answered from
//!   the `initialize` result, the server's `elicitation/create`,
//!   `sampling/createMessage`, `roots/list` and `ping` requests are answered with the
//!   user's handlers (the ones the modern MRTR loop uses), and legacy change
//!   notifications reach [`Client::listen`](mcp_client::Client::listen) (a filter's
//!   resource URIs are sent as `resources/subscribe`).
//!
//! A legacy server, here a shell script that answers like a 2025-03-26 server: the probe
//! fails with -32601, so the client sends `initialize`, and the modern API works on:
//!
//! ```
//! # #[cfg(unix)]
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! use mcp_client::Client;
//! use mcp_legacy::client::Connector;
//! use mcp_transport_stdio::ServerCommand;
//! use mcp_types::Era;
//!
//! let script = r#"
//! read line; echo '{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}'
//! read line; echo '{"jsonrpc":"2.0","id":2,"result":{"protocolVersion":"2025-03-26","capabilities":{"tools":{}},"serverInfo":{"name":"old","version":"0.1"}}}'
//! read line; read line
//! echo '{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"hello from 2025-03-26"}]}}'
//! cat > /dev/null
//! "#;
//! let connection = Connector::new(Client::builder("my-agent", "1.0"))
//!     .connect_stdio(&ServerCommand::new("sh").arg("-c").arg(script))
//!     .await?;
//! assert_eq!(connection.verdict.era, Era::Legacy);
//! assert_eq!(connection.verdict.version, "2025-03-26");
//! let result = connection.client.call_tool("hello", mcp_types::JsonObject::new()).await?;
//! let text = serde_json::to_value(&result.content)?;
//! assert_eq!(text[0]["text"], "hello from 2025-03-26");
//! let _ = connection.server.shutdown(std::time::Duration::from_secs(1)).await;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```
//!
//! Handlers registered on the builder answer a legacy server's requests:
//!
//! ```no_run
//! # async fn run() -> Result<(), mcp_legacy::Error> {
//! use mcp_client::Client;
//! use mcp_legacy::client::{Connector, VerdictCache};
//!
//! let builder = Client::builder("my-agent", "1.0").on_elicit(|request| async move {
//!     Err::<mcp_types::ElicitResult, _>(format!("no user here to answer {request:?}"))
//! });
//! let verdicts = VerdictCache::default(); // share it to probe each URL once
//! let connection = Connector::new(builder)
//!     .verdicts(verdicts)
//!     .connect_http("http://127.0.0.1:3001/mcp", Default::default())
//!     .await?;
//! println!("{:?}", connection.verdict);
//! let tools = connection.client.list_tools_all().await?;
//! # let _ = tools;
//! connection.client.shutdown(std::time::Duration::from_secs(1)).await;
//! # Ok(())
//! # }
//! ```

#[cfg(feature = "http")]
mod http;
mod session;
#[cfg(feature = "stdio")]
mod stdio;
#[cfg(feature = "stdio")]
mod supervised;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_client::{ClientBuilder, InputHandlers};
use mcp_jsonrpc::RequestOptions;
use mcp_types::Era;
use serde_json::{Value, json};

use crate::Error;
use crate::LEGACY_VERSIONS;
use session::{Handshake, Wire};

#[cfg(feature = "http")]
pub use http::{HttpConnection, MAX_PENDING, MAX_RESUMES, MAX_SERVER_REQUESTS, MIN_RETRY};
#[cfg(feature = "stdio")]
pub use stdio::StdioConnection;
#[cfg(feature = "stdio")]
pub use supervised::{StdioSupervisor, SupervisedStdio};

/// The modern revision the client core speaks.
const MODERN: &str = "2026-07-28";
/// How long a probe waits for an answer by default.
pub const DEFAULT_PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// How the client chooses the era.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum EraChoice {
    /// Probe the server as the spec says (the default).
    #[default]
    Detect,
    /// Speak 2026-07-28 without probing.
    Modern,
    /// Skip the probe and send `initialize`, offering 2025-11-25 and accepting any legacy
    /// revision.
    Legacy,
    /// Speak exactly this version: `2026-07-28` is [`Modern`](Self::Modern); a legacy
    /// revision is offered in `initialize` and the only one accepted; any other version
    /// makes the connection fail with [`Error::UnknownVersion`].
    Version(String),
}

/// What the client found out about the server.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Verdict {
    /// The server's era.
    pub era: Era,
    /// The protocol version in use (for a modern server, the one requests carry).
    pub version: String,
    /// The transport the session runs on.
    pub transport: Transport,
}

/// The transport a session runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Transport {
    /// The server's stdin and stdout.
    Stdio,
    /// Streamable HTTP (either era).
    StreamableHttp,
    /// The 2024-11-05 HTTP+SSE transport.
    HttpSse,
}

/// Connects a [`ClientBuilder`] to a server of either era; see the [module docs](self).
#[derive(Debug)]
pub struct Connector {
    builder: ClientBuilder,
    choice: EraChoice,
    probe_timeout: Duration,
    /// The legacy revisions offered (first) and accepted.
    legacy_offer: Vec<String>,
    /// Verdicts remembered across connections (HTTP).
    verdicts: Option<VerdictCache>,
}

/// How many servers a [`VerdictCache`] remembers.
pub const MAX_VERDICTS: usize = 1024;

/// Verdicts remembered across connections, by server URL: a [`Connector`] given one
/// ([`Connector::verdicts`]) does not probe an HTTP server whose era it already knows, and
/// forgets the verdict (so that the next connection probes again) when it fails: a
/// remembered legacy verdict whose handshake fails, or a legacy session that cannot be
/// re-established after it expired. Over stdio every process is probed: a verdict holds
/// for one server process. Cheap to clone; clones share the verdicts. At most
/// [`MAX_VERDICTS`] servers are remembered (past that, one is forgotten).
///
/// ```
/// use mcp_legacy::client::VerdictCache;
/// use mcp_types::Era;
///
/// let verdicts = VerdictCache::default();
/// assert_eq!(verdicts.get("http://127.0.0.1:8080/mcp"), None);
/// ```
#[derive(Debug, Clone, Default)]
pub struct VerdictCache(Arc<Mutex<HashMap<String, Era>>>);

impl VerdictCache {
    /// The era remembered for `server` (a URL), if any.
    pub fn get(&self, server: &str) -> Option<Era> {
        self.lock().get(server).copied()
    }

    /// Forgets `server`'s era: the next connection probes it.
    pub fn forget(&self, server: &str) {
        self.lock().remove(server);
    }

    #[cfg_attr(
        not(feature = "http"),
        allow(dead_code, reason = "only HTTP remembers")
    )]
    fn put(&self, server: &str, era: Era) {
        let mut verdicts = self.lock();
        if verdicts.len() >= MAX_VERDICTS
            && !verdicts.contains_key(server)
            && let Some(any) = verdicts.keys().next().cloned()
        {
            verdicts.remove(&any);
        }
        verdicts.insert(server.to_owned(), era);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Era>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Connector {
    /// A connector that detects the era, for a client built by `builder`.
    pub fn new(builder: ClientBuilder) -> Self {
        Connector {
            builder,
            choice: EraChoice::Detect,
            probe_timeout: DEFAULT_PROBE_TIMEOUT,
            legacy_offer: LEGACY_VERSIONS.iter().map(|v| (*v).to_owned()).collect(),
            verdicts: None,
        }
    }

    /// Remembers HTTP verdicts in `verdicts` (shared with other connectors): a server
    /// whose era is known is not probed again until that verdict fails.
    #[must_use]
    pub fn verdicts(mut self, verdicts: VerdictCache) -> Self {
        self.verdicts = Some(verdicts);
        self
    }

    /// Pins an era or a version instead of probing.
    #[must_use]
    pub fn era(mut self, choice: EraChoice) -> Self {
        if let EraChoice::Version(version) = &choice
            && LEGACY_VERSIONS.contains(&version.as_str())
        {
            self.legacy_offer = vec![version.clone()];
        }
        self.choice = choice;
        self
    }

    /// The legacy revisions this connector may use with an initialize-era server, in order
    /// of preference: the first is offered in `initialize`, any of them is accepted in the
    /// answer (default: every revision of [`LEGACY_VERSIONS`], newest first). Revisions
    /// this client does not speak are dropped; with none left, no legacy answer is
    /// accepted (the handshake fails with [`Error::UnsupportedVersion`]). A later
    /// [`era`](Self::era) pinning a legacy version replaces the list.
    ///
    /// ```
    /// use mcp_legacy::client::{Connector, EraChoice};
    ///
    /// let connector = Connector::new(mcp_client::Client::builder("agent", "1.0"))
    ///     .era(EraChoice::Legacy)
    ///     .legacy_versions(["2025-06-18", "2025-03-26"]);
    /// # let _ = connector;
    /// ```
    #[must_use]
    pub fn legacy_versions<I, S>(mut self, versions: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut offer: Vec<String> = Vec::new();
        for version in versions {
            let version = version.as_ref();
            if LEGACY_VERSIONS.contains(&version) && !offer.iter().any(|v| v == version) {
                offer.push(version.to_owned());
            }
        }
        self.legacy_offer = offer;
        self
    }

    /// How long the probe (and the `initialize` request) waits for an answer (default
    /// [`DEFAULT_PROBE_TIMEOUT`]).
    #[must_use]
    pub fn probe_timeout(mut self, timeout: Duration) -> Self {
        self.probe_timeout = timeout;
        self
    }

    /// Refuses a pinned version this client does not speak.
    fn check_pin(&self) -> Result<(), Error> {
        match &self.choice {
            EraChoice::Version(version)
                if !LEGACY_VERSIONS.contains(&version.as_str())
                    && !mcp_client::SUPPORTED_VERSIONS.contains(&version.as_str()) =>
            {
                Err(Error::UnknownVersion(version.clone()))
            }
            _ => Ok(()),
        }
    }

    /// The era the user pinned, if any.
    fn pinned_era(&self) -> Option<Era> {
        match &self.choice {
            EraChoice::Detect => None,
            EraChoice::Legacy => Some(Era::Legacy),
            EraChoice::Version(version) if LEGACY_VERSIONS.contains(&version.as_str()) => {
                Some(Era::Legacy)
            }
            EraChoice::Modern | EraChoice::Version(_) => Some(Era::Modern),
        }
    }

    /// Spawns `command` and connects to it over stdio, detecting its era unless pinned.
    ///
    /// Cancel safety: dropping the future drops the connection, which stops the process.
    #[cfg(feature = "stdio")]
    pub async fn connect_stdio(
        self,
        command: &mcp_transport_stdio::ServerCommand,
    ) -> Result<StdioConnection, Error> {
        self.check_pin()?;
        stdio::connect(self, command).await
    }

    /// Spawns `command` and owns it: the era of each process is detected (unless
    /// pinned), and a server that crashes is started again under `policy` and probed
    /// again, so that a new process speaking another era is still reached. The request
    /// that saw the crash is re-sent only if it is safe to run twice (discover, lists,
    /// reads, prompts, completion); any other fails with
    /// [`mcp_client::Error::MayHaveRun`]. Stop it with
    /// [`Client::shutdown`](mcp_client::Client::shutdown).
    ///
    /// Cancel safety: dropping the future drops the process started so far.
    #[cfg(feature = "stdio")]
    pub async fn spawn_stdio(
        self,
        command: mcp_transport_stdio::ServerCommand,
        policy: mcp_client::RestartPolicy,
    ) -> Result<SupervisedStdio, Error> {
        self.check_pin()?;
        supervised::spawn(self, command, policy).await
    }

    /// Connects to the MCP endpoint at `url` (with `config`'s headers and limits),
    /// detecting its era and transport unless pinned: modern Streamable HTTP, legacy
    /// Streamable HTTP, or the 2024-11-05 HTTP+SSE transport (then `url` is the SSE URL).
    ///
    /// Cancel safety: dropping the future abandons the handshake; a session the server
    /// already created expires on its side.
    #[cfg(feature = "http")]
    pub async fn connect_http(
        self,
        url: &str,
        config: mcp_transport_http::HttpClientConfig,
    ) -> Result<HttpConnection, Error> {
        self.check_pin()?;
        http::connect(self, url, config).await
    }
}

/// The modern `_meta` of a probe.
fn modern_meta(handlers: &InputHandlers) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": handlers.capabilities(),
        "io.modelcontextprotocol/clientInfo": handlers.info(),
    })
}

/// `initialize` over `wire`, offering `offer[0]` and accepting any of `offer`.
async fn handshake<W: Wire>(
    wire: &W,
    handlers: &InputHandlers,
    offer: &[String],
    timeout: Duration,
) -> Result<Handshake, Error> {
    let offered = offer.first().map_or(LEGACY_VERSIONS[0], String::as_str);
    let params = json!({
        "protocolVersion": offered,
        "capabilities": handlers.capabilities(),
        "clientInfo": handlers.info(),
    });
    let raw = wire
        .request(
            mcp_types::legacy::method::INITIALIZE,
            params,
            RequestOptions::default()
                .timeout(timeout)
                .max_timeout(timeout),
        )
        .await
        .map_err(Error::Handshake)?;
    let result: mcp_types::legacy::InitializeResult =
        serde_json::from_str(raw.get()).map_err(Error::Malformed)?;
    if !offer.contains(&result.protocol_version) {
        return Err(Error::UnsupportedVersion {
            answered: result.protocol_version,
            accepted: offer.to_vec(),
        });
    }
    Ok(Handshake {
        version: result.protocol_version,
        result: serde_json::from_str(raw.get()).map_err(Error::Malformed)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_legacy_offer_keeps_known_revisions_in_order() {
        let connector = || Connector::new(mcp_client::Client::builder("t", "1"));
        let offer = connector()
            .legacy_versions(["2025-03-26", "1999-01-01", "2025-11-25", "2025-03-26"])
            .legacy_offer;
        assert_eq!(offer, ["2025-03-26", "2025-11-25"]);
        assert!(
            connector()
                .legacy_versions(["2026-07-28"])
                .legacy_offer
                .is_empty()
        );
        // A pinned legacy version replaces the list.
        let pinned = connector()
            .legacy_versions(["2025-03-26"])
            .era(EraChoice::Version("2024-11-05".to_owned()));
        assert_eq!(pinned.legacy_offer, ["2024-11-05"]);
    }
}
