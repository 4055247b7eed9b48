//! What a handler knows about the request it serves: [`RequestContext`], with the
//! transport's facts ([`TransportInfo`], [`Headers`], [`Principal`]) and the request's
//! cancellation ([`CancelSlot`]).

use std::fmt;
use std::sync::Arc;

use mcp_types::{ProgressNotificationParams, ProgressToken, RequestId};
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use super::PROGRESS;
use crate::error::Error;
use crate::sink::NotificationSink;

/// Headers a transport lends to the layers above without copying them: HTTP hands over
/// the request's own header map (`mcp-transport-http` implements this for
/// `http::HeaderMap`). Names are matched case-insensitively; values that are not visible
/// ASCII are not offered.
pub trait Headers: Send + Sync + fmt::Debug + 'static {
    /// The first value of the header `name`.
    fn get(&self, name: &str) -> Option<&str>;

    /// Every header, names lower-cased, in arrival order.
    fn iter(&self) -> Box<dyn Iterator<Item = (&str, &str)> + '_>;

    /// The transport's own record of the request, for a layer that knows its type
    /// ([`TransportInfo::request`]): for HTTP (`mcp-transport-http`), the request's
    /// `Arc<http::request::Parts>`, with the extensions that middleware inserted. The
    /// default lends none.
    fn request(&self) -> Option<&(dyn std::any::Any + Send + Sync)> {
        None
    }
}

impl Headers for Vec<(String, String)> {
    fn get(&self, name: &str) -> Option<&str> {
        self.as_slice()
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn iter(&self) -> Box<dyn Iterator<Item = (&str, &str)> + '_> {
        Box::new(
            self.as_slice()
                .iter()
                .map(|(n, v)| (n.as_str(), v.as_str())),
        )
    }
}

/// Who made a request, as an authenticating transport established it (for HTTP, from the
/// `Authorization` header, by the authenticator the server was configured with).
///
/// The engine and the transports treat it as opaque; the layer that authenticated knows
/// its concrete type and gets it back with `downcast_ref` (on `dyn Principal`).
/// The server core binds what must not cross principals (sealed `requestState`, legacy
/// sessions) to [`id`](Principal::id).
///
/// ```
/// use mcp_jsonrpc::{Principal, TransportInfo};
/// use std::sync::Arc;
///
/// #[derive(Debug)]
/// struct User(String);
/// impl Principal for User {
///     fn id(&self) -> &str {
///         &self.0
///     }
/// }
///
/// let info = TransportInfo::default().with_principal(Arc::new(User("alice".into())));
/// let principal = info.principal().unwrap();
/// assert_eq!(principal.id(), "alice");
/// assert_eq!(principal.downcast_ref::<User>().unwrap().0, "alice");
/// ```
pub trait Principal: std::any::Any + Send + Sync + fmt::Debug {
    /// A stable identifier: the same for every request of one principal, never shared by
    /// two principals (an authenticator that knows several issuers includes the issuer).
    fn id(&self) -> &str;

    /// Whether this principal may make the request `method` on `target`: for an MCP server,
    /// the name of the tool a `tools/call` runs or of the prompt a `prompts/get` gets, or
    /// the URI a `resources/read` reads (and the template that serves it). The default
    /// permits everything: a principal whose authenticator has no rules per operation.
    ///
    /// The server core asks this after it has read the target out of the very params it
    /// dispatches, so the decision is made on the value that runs, not on a second reading
    /// of the request that a crafted message could make disagree with the first. A transport
    /// may refuse earlier (an HTTP `403` from its authenticator); this is the check that
    /// holds whatever came before it.
    fn permits(&self, method: &str, target: &str) -> bool {
        let _ = (method, target);
        true
    }
}

impl dyn Principal {
    /// The principal as its concrete type, if it is a `T`.
    pub fn downcast_ref<T: Principal>(&self) -> Option<&T> {
        (self as &dyn std::any::Any).downcast_ref()
    }
}

/// What a transport knows about one request that the layers above may want: for HTTP, the
/// request's headers and, when the server authenticates requests, the [`Principal`] that
/// made it. An authenticating transport leaves the credentials (`Authorization`) out of
/// the headers, so that no handler can pass them on.
#[derive(Debug)]
#[non_exhaustive]
pub struct TransportInfo {
    headers: Box<dyn Headers>,
    /// Who made the request, when the transport authenticated it.
    pub principal: Option<Arc<dyn Principal>>,
}

impl Default for TransportInfo {
    fn default() -> Self {
        TransportInfo::with_headers(Vec::new())
    }
}

impl TransportInfo {
    /// Facts made of headers (names lower-cased, in arrival order).
    pub fn with_headers(headers: Vec<(String, String)>) -> Self {
        TransportInfo {
            headers: Box::new(headers),
            principal: None,
        }
    }

    /// Facts made of headers the transport lends as they are (no copy).
    pub fn from_headers(headers: impl Headers) -> Self {
        TransportInfo {
            headers: Box::new(headers),
            principal: None,
        }
    }

    /// The same facts, with the principal that made the request.
    #[must_use]
    pub fn with_principal(mut self, principal: Arc<dyn Principal>) -> Self {
        self.principal = Some(principal);
        self
    }

    /// Who made the request, if the transport authenticated it.
    pub fn principal(&self) -> Option<&dyn Principal> {
        self.principal.as_deref()
    }

    /// The first value of the header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name)
    }

    /// Every header, names lower-cased, in arrival order.
    pub fn headers(&self) -> impl Iterator<Item = (&str, &str)> + '_ {
        self.headers.iter()
    }

    /// The transport's own record of the request, if it lends one of type `T`
    /// ([`Headers::request`]): for HTTP, `Arc<http::request::Parts>` (its method, URI,
    /// version, headers and extensions). The engine never reads it.
    pub fn request<T: std::any::Any>(&self) -> Option<&T> {
        self.headers.request()?.downcast_ref()
    }
}

/// A request's cancellation token, made when first needed: by a handler that asks for it
/// ([`RequestContext::cancellation`]), or by whatever cancels the request. Most requests
/// are answered without either, and a `CancellationToken` costs an allocation and a lock
/// at each clone, drop and check (about 7 % of the stdio server's time per small call);
/// this slot costs one small allocation and atomics.
/// Clones share the slot, so every clone sees the same token.
#[derive(Debug, Clone, Default)]
pub(super) struct CancelSlot(Arc<std::sync::OnceLock<CancellationToken>>);

impl CancelSlot {
    /// A slot holding `token` already (a transport that made its own).
    pub(super) fn with(token: CancellationToken) -> Self {
        CancelSlot(Arc::new(std::sync::OnceLock::from(token)))
    }

    /// The token, made now if nothing asked for it before.
    pub(super) fn token(&self) -> &CancellationToken {
        self.0.get_or_init(CancellationToken::new)
    }

    /// Cancels the request (making its token, so that a handler asking later sees it
    /// cancelled).
    pub(super) fn cancel(&self) {
        self.token().cancel();
    }

    /// Whether the request was cancelled; a token never made was never cancelled.
    pub(super) fn is_cancelled(&self) -> bool {
        self.0.get().is_some_and(CancellationToken::is_cancelled)
    }
}

/// What a handler knows about the request it serves.
#[derive(Debug, Clone)]
pub struct RequestContext {
    pub(super) id: RequestId,
    pub(super) cancel: CancelSlot,
    pub(super) sink: NotificationSink,
    pub(super) transport: Option<Arc<TransportInfo>>,
}

impl RequestContext {
    /// A context for a request a transport dispatches itself (HTTP does, one request per
    /// POST): its id, the token that cancels it, and where its notifications go.
    pub fn new(id: RequestId, cancel: CancellationToken, sink: NotificationSink) -> Self {
        RequestContext {
            id,
            cancel: CancelSlot::with(cancel),
            sink,
            transport: None,
        }
    }

    /// Attaches what the transport knows about the request (HTTP headers).
    #[must_use]
    pub fn with_transport_info(mut self, info: Arc<TransportInfo>) -> Self {
        self.transport = Some(info);
        self
    }

    /// What the transport knows about the request, if it told.
    pub fn transport_info(&self) -> Option<&TransportInfo> {
        self.transport.as_deref()
    }

    /// The request's id.
    pub fn id(&self) -> &RequestId {
        &self.id
    }

    /// Fired when the peer cancels the request or the connection shuts down.
    pub fn cancellation(&self) -> &CancellationToken {
        self.cancel.token()
    }

    /// Whether the request was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// Where this request's notifications go.
    pub fn sink(&self) -> &NotificationSink {
        &self.sink
    }

    /// Sends a notification tied to this request (a log message, a subscription event).
    pub async fn notify<P: Serialize + ?Sized>(
        &self,
        method: &str,
        params: Option<&P>,
    ) -> Result<(), Error> {
        self.sink.notify(method, params).await
    }

    /// Sends `notifications/progress` for `token` (the progress token the request's
    /// `_meta` carried; the layer above reads it).
    pub async fn progress(
        &self,
        token: ProgressToken,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> Result<(), Error> {
        let mut params = ProgressNotificationParams::new(
            serde_json::Number::from_f64(progress).unwrap_or_else(|| 0.into()),
            token,
        );
        params.total = total.and_then(serde_json::Number::from_f64);
        params.message = message;
        self.sink.notify(PROGRESS, Some(&params)).await
    }
}
