//! The dual-era server over one connection (stdio, or any transport the engine accepts):
//! [`DualEra`] wraps a modern handler (an `mcp_server::Server`) and lets the first message
//! choose the era, as <https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/stdio> (Backward
//! Compatibility) and <https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning> say.
//!
//! - `initialize` first: the connection is a legacy session for its whole life. The
//!   version is negotiated among the enabled legacy revisions
//!   (<https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle>); capabilities, server info and instructions
//!   come from the wrapped server's own `server/discover`, so nothing is declared twice.
//!   Every later request is handed to the same handler with the session's facts as its
//!   `_meta` (protocol version 2026-07-28 for the core, the client's capabilities, its
//!   info and the level set by `logging/setLevel`); `resultType`, `ttlMs` and
//!   `cacheScope` are removed from results, and an unknown resource is -32002 again. `ping`
//!   is answered here.
//! - A request carrying modern `_meta` first: the connection is modern and every message
//!   passes through untouched.
//! - Anything else before `initialize` gets an error (-32600), never an exit.
//!
//! - A handler's `input_required` answer becomes real server-to-client requests
//!   (`elicitation/create`, `sampling/createMessage`, `roots/list`) on the connection
//!   (serve with [`DualEra::connect`] or [`DualEra::serve_stdio`]); the request is then
//!   run again with the answers as `inputResponses` and `requestState` echoed, up to ten
//!   rounds, so one handler body serves both eras.
//!
//! - Changes reach a legacy session the legacy way: `listChanged` and `subscribe` are
//!   offered, `resources/subscribe` and `unsubscribe` are answered here, and a relay of one
//!   `subscriptions/listen` on the core sends `notifications/*/list_changed` and, for the
//!   subscribed URIs only, `notifications/resources/updated`, untagged, on the connection.
//!
//! The HTTP side (sessions, the GET stream, resumption) is [`crate::http`].

use std::sync::{Arc, OnceLock};

use mcp_jsonrpc::{
    Connection, ErrorObject, FrameReader, FrameWriter, Handler, Notification, Peer, PeerConfig,
    Request, RequestContext,
};
use mcp_types::ErrorCode;
use serde_json::value::RawValue;

pub use crate::session::LEGACY_VERSIONS;
use crate::session::{self, ALREADY_INITIALIZED, Link, Session, has_modern_meta};

/// What the first message decided.
#[derive(Debug)]
enum Era {
    Modern,
    Legacy(Box<Session>),
}

/// A handler serving both eras on one connection; see the [module docs](self).
///
/// ```
/// use mcp_legacy::server::DualEra;
/// use mcp_server::Server;
///
/// let server = Server::builder("demo", "1.0.0").build().unwrap();
/// let handler = DualEra::new(server);
/// assert_eq!(handler.legacy_versions()[0], "2025-11-25");
/// ```
#[derive(Debug)]
pub struct DualEra<H> {
    inner: Arc<H>,
    era: OnceLock<Era>,
    versions: Vec<&'static str>,
    /// The connection's peer, for server-to-client requests; set by [`DualEra::connect`].
    peer: OnceLock<Peer>,
}

impl<H: Handler> DualEra<H> {
    /// Wraps `inner`, enabling every legacy revision.
    pub fn new(inner: H) -> Self {
        DualEra {
            inner: Arc::new(inner),
            era: OnceLock::new(),
            versions: LEGACY_VERSIONS.to_vec(),
            peer: OnceLock::new(),
        }
    }

    /// Enables only `versions` (each one of [`LEGACY_VERSIONS`]; others are ignored).
    /// With none enabled, `initialize` is refused with the versions the server supports.
    #[must_use]
    pub fn with_legacy_versions(mut self, versions: &[&str]) -> Self {
        self.versions = session::legacy_versions(versions);
        self
    }

    /// The enabled legacy revisions, newest first.
    pub fn legacy_versions(&self) -> &[&'static str] {
        &self.versions
    }

    /// Serves one connection over `reader` and `writer`, keeping its peer so that a
    /// legacy session can be sent server-to-client requests.
    pub fn connect<R: FrameReader, W: FrameWriter>(
        self,
        reader: R,
        writer: W,
        config: PeerConfig,
    ) -> (Peer, Connection) {
        // The peer is known before the first message is read: an `initialize` already
        // waiting on the pipe starts the session's relay of change notifications on it.
        Peer::connect_with(reader, writer, config, |peer| {
            let _ = self.peer.set(peer.clone());
            self
        })
    }

    /// Serves both eras on this process's stdin and stdout until the client closes stdin
    /// (<https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/stdio>).
    #[cfg(feature = "stdio")]
    pub async fn serve_stdio(self) {
        let (reader, writer) = mcp_transport_stdio::stdio();
        let (_peer, connection) = self.connect(reader, writer, PeerConfig::default());
        connection.closed().await;
    }

    async fn initialize(
        &self,
        request: Request,
        cx: RequestContext,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let (session, result) =
            session::initialize(&*self.inner, &self.versions, request, cx).await?;
        if self.era.set(Era::Legacy(Box::new(session))).is_err() {
            return Err(ErrorObject::new(
                ErrorCode::INVALID_REQUEST,
                ALREADY_INITIALIZED,
            ));
        }
        if let Some(Era::Legacy(session)) = self.era.get() {
            session::relisten(&self.inner, session, &self.link()).await;
        }
        Ok(result)
    }

    fn link(&self) -> Link<'_> {
        Link::Peer(self.peer.get())
    }

    async fn legacy(
        &self,
        session: &Session,
        request: Request,
        cx: RequestContext,
    ) -> Result<Box<RawValue>, ErrorObject> {
        session::serve(&self.inner, session, request, cx, &self.link()).await
    }
}

impl<H: Handler> Handler for DualEra<H> {
    async fn request(
        &self,
        request: Request,
        cx: RequestContext,
    ) -> Result<Box<RawValue>, ErrorObject> {
        match self.era.get() {
            Some(Era::Legacy(session)) => self.legacy(session, request, cx).await,
            Some(Era::Modern) => self.inner.request(request, cx).await,
            // `initialize` with modern `_meta` is a modern request (for a method
            // 2026-07-28 removed), not a handshake.
            None if has_modern_meta(request.params.as_ref()) => {
                // A lost race with a concurrent `initialize` leaves that era in place.
                let _ = self.era.set(Era::Modern);
                match self.era.get() {
                    Some(Era::Legacy(session)) => self.legacy(session, request, cx).await,
                    _ => self.inner.request(request, cx).await,
                }
            }
            None if request.method == "initialize" => self.initialize(request, cx).await,
            None => Err(ErrorObject::new(
                ErrorCode::INVALID_REQUEST,
                format!(
                    "{} before initialize: send initialize first, or use 2026-07-28 `_meta`",
                    request.method
                ),
            )),
        }
    }

    fn notification(&self, notification: Notification, peer: &Peer) {
        match (self.era.get(), notification.method.as_str()) {
            // The handshake's last step; nothing to do for a connection-scoped session.
            (Some(Era::Legacy(_)), "notifications/initialized") => {}
            _ => self.inner.notification(notification, peer),
        }
    }

    fn mirrored(&self) -> mcp_jsonrpc::Mirrored {
        self.inner.mirrored()
    }
}
