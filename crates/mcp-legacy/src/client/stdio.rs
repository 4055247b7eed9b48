//! Era detection and legacy sessions over stdio
//! (<https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/stdio>, Backward Compatibility).
//!
//! One connection to one server process: the probe, the handshake and the session all use
//! it. The connection's engine handler is [`StdioHandler`]: before the verdict it ignores
//! notifications; for a modern server it hands them to the client's router (subscriptions)
//! and refuses server requests as a 2026-07-28 client must; for a legacy session it answers
//! server requests with the user's handlers and turns change notifications into `listen`
//! events.

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use mcp_client::{ClientBuilder, ListenRouter};
use mcp_jsonrpc::{
    ErrorObject, Handler, Notification, Peer, Request, RequestContext, RequestOptions,
};
use mcp_types::Era;
use serde_json::Value;
use serde_json::value::RawValue;

use super::session::{Session, Shared, Wire};
use super::{Connector, Error, Verdict, handshake};

/// The engine handler of a dual-era stdio connection.
#[derive(Debug, Clone)]
pub(super) struct StdioHandler {
    pub(super) shared: Arc<Shared>,
    /// `Some(Era)` once the verdict is in.
    era: Arc<OnceLock<Era>>,
    pub(super) router: ListenRouter,
}

impl Handler for StdioHandler {
    async fn request(
        &self,
        request: Request,
        cx: RequestContext,
    ) -> Result<Box<RawValue>, ErrorObject> {
        match self.era.get() {
            Some(Era::Legacy) => {
                let params = request
                    .params
                    .as_ref()
                    .map(|p| {
                        let raw = p.checked().map_err(|e| e.to_error_object())?;
                        serde_json::from_str::<Value>(raw.get())
                            .map_err(|e| ErrorObject::invalid_params(e.to_string()))
                    })
                    .transpose()?;
                let answer = self.shared.answer(&request.method, params).await?;
                serde_json::value::to_raw_value(&answer)
                    .map_err(|e| ErrorObject::internal(e.to_string()))
            }
            _ => self.router.request(request, cx).await,
        }
    }

    fn notification(&self, notification: Notification, peer: &Peer) {
        match self.era.get() {
            Some(Era::Legacy) => {
                let params = notification
                    .params
                    .as_deref()
                    .and_then(|p| serde_json::from_str::<Value>(p.get()).ok());
                self.shared.notify(&notification.method, params.as_ref());
            }
            Some(_) => self.router.notification(notification, peer),
            None => {
                tracing::debug!(method = %notification.method, "notification before the era is known");
            }
        }
    }
}

/// The legacy wire over the engine connection, with the session it carries.
pub(super) struct StdioWire(Peer, Arc<Shared>);

impl Wire for StdioWire {
    async fn request(
        &self,
        method: &str,
        params: Value,
        options: RequestOptions,
    ) -> Result<Box<RawValue>, mcp_client::Error> {
        self.0
            .request(method, Some(&params), options)
            .await
            .map_err(mcp_client::Error::from)
    }

    async fn close(&self, _grace: Duration) {
        // The process belongs to the caller's `ServerConnection`, which stops it; the
        // session's subscriptions end here.
        self.1.ended.cancel();
    }
}

/// A client connected to a server process over stdio, in whichever era it speaks.
#[derive(Debug)]
#[non_exhaustive]
pub struct StdioConnection {
    /// The client: the same API in both eras.
    pub client: mcp_client::Client,
    /// Which era and version the server speaks.
    pub verdict: Verdict,
    /// The server process: shut it down with
    /// [`ServerConnection::shutdown`](mcp_transport_stdio::ServerConnection::shutdown).
    pub server: mcp_transport_stdio::ServerConnection,
}

/// One server process, probed and (for a legacy server) initialized.
pub(super) struct Opened {
    pub(super) handler: StdioHandler,
    pub(super) peer: Peer,
    pub(super) server: mcp_transport_stdio::ServerConnection,
    /// The legacy session, for a legacy server.
    pub(super) session: Option<Session<StdioWire>>,
    pub(super) verdict: Verdict,
}

/// What [`open`] needs to know: the user's handlers and the era choice.
pub(super) struct Plan<'a> {
    pub(super) handlers: &'a mcp_client::InputHandlers,
    pub(super) pinned: Option<Era>,
    pub(super) probe_timeout: Duration,
    pub(super) offer: &'a [String],
}

/// Spawns `command`, probes it (unless the era is pinned) and, for a legacy server, runs
/// the handshake.
pub(super) async fn open(
    command: &mcp_transport_stdio::ServerCommand,
    plan: &Plan<'_>,
) -> Result<Opened, Error> {
    let handler = StdioHandler {
        shared: Shared::new(plan.handlers.clone()),
        era: Arc::default(),
        router: ListenRouter::default(),
    };
    let (peer, server) = mcp_transport_stdio::connect(
        command,
        handler.clone(),
        mcp_transport_stdio::client_config(),
    )
    .map_err(Error::Spawn)?;
    // The session (and its subscriptions) ends when the process does.
    let exited = server.process().exited();
    let shared = Arc::clone(&handler.shared);
    tokio::spawn(async move {
        let _ = exited.await;
        shared.ended.cancel();
    });
    let era = match plan.pinned {
        Some(era) => era,
        None => probe(&peer, plan.handlers, plan.probe_timeout).await?,
    };
    let _ = handler.era.set(era);
    if era != Era::Legacy {
        return Ok(Opened {
            handler,
            peer,
            server,
            session: None,
            verdict: Verdict {
                era: Era::Modern,
                version: super::MODERN.to_owned(),
                transport: super::Transport::Stdio,
            },
        });
    }
    let wire = Arc::new(StdioWire(peer.clone(), Arc::clone(&handler.shared)));
    let handshake = handshake(wire.as_ref(), plan.handlers, plan.offer, plan.probe_timeout).await?;
    wire.0
        .notify(
            mcp_types::legacy::method::NOTIFICATIONS_INITIALIZED,
            None::<&()>,
        )
        .await
        .map_err(|e| Error::Handshake(e.into()))?;
    let verdict = Verdict {
        era: Era::Legacy,
        version: handshake.version.clone(),
        transport: super::Transport::Stdio,
    };
    let session = Session {
        wire,
        shared: Arc::clone(&handler.shared),
        handshake: Arc::new(Mutex::new(handshake)),
    };
    Ok(Opened {
        handler,
        peer,
        server,
        session: Some(session),
        verdict,
    })
}

pub(super) async fn connect(
    connector: Connector,
    command: &mcp_transport_stdio::ServerCommand,
) -> Result<StdioConnection, Error> {
    let handlers = connector.builder.input_handlers();
    let plan = Plan {
        handlers: &handlers,
        pinned: connector.pinned_era(),
        probe_timeout: connector.probe_timeout,
        offer: &connector.legacy_offer,
    };
    let opened = open(command, &plan).await?;
    let builder: ClientBuilder = connector.builder;
    let client = match opened.session {
        Some(session) => builder.connect_custom(Arc::new(session)),
        None => builder.connect_peer(opened.peer, opened.handler.router.clone()),
    };
    Ok(StdioConnection {
        client,
        verdict: opened.verdict,
        server: opened.server,
    })
}

/// `server/discover` with modern `_meta`: a result or a recognized modern error means
/// modern; any other error, or no answer within `timeout`, means legacy.
async fn probe(
    peer: &Peer,
    handlers: &mcp_client::InputHandlers,
    timeout: Duration,
) -> Result<Era, Error> {
    let params = serde_json::json!({ "_meta": super::modern_meta(handlers) });
    let outcome = peer
        .request(
            mcp_types::method::SERVER_DISCOVER,
            Some(&params),
            RequestOptions::default()
                .timeout(timeout)
                .max_timeout(timeout),
        )
        .await;
    Ok(match outcome {
        Ok(raw) => {
            let result: Value = serde_json::from_str(raw.get()).unwrap_or_default();
            if result.get("supportedVersions").is_some_and(Value::is_array) {
                Era::Modern
            } else {
                Era::Legacy
            }
        }
        Err(mcp_jsonrpc::Error::Remote(error)) if super::session::is_modern_error(&error) => {
            Era::Modern
        }
        Err(e) if peer.is_closed() => return Err(Error::Handshake(e.into())),
        Err(e) => {
            tracing::debug!(error = %e, "server/discover failed: a legacy server");
            Era::Legacy
        }
    })
}
