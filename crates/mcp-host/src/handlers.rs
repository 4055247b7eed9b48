//! The answers the embedding application gives to servers' own requests (elicitation,
//! sampling, roots), installed once on the host and applied to every client it connects.
//!
//! A server may ask the user something (<https://modelcontextprotocol.io/specification/2026-07-28/client/elicitation>),
//! ask the application's model to sample (<https://modelcontextprotocol.io/specification/2026-07-28/client/sampling>)
//! or ask for the roots it may work in (<https://modelcontextprotocol.io/specification/2026-07-28/client/roots>).
//! A client declares each capability only when it has a handler for it, so without one a
//! server that needs it refuses the call (-32021) instead of asking.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use mcp_client::ClientBuilder;
use mcp_types::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    ListRootsResult,
};

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;
type ElicitFn =
    Arc<dyn Fn(ElicitRequestParams) -> BoxFuture<Result<ElicitResult, String>> + Send + Sync>;
type SampleFn = Arc<
    dyn Fn(CreateMessageRequestParams) -> BoxFuture<Result<CreateMessageResult, String>>
        + Send
        + Sync,
>;
type RootsFn = Arc<dyn Fn() -> BoxFuture<Result<ListRootsResult, String>> + Send + Sync>;

/// The handlers every client of a host answers servers' requests with (see
/// [`HostBuilder::on_elicit`](crate::HostBuilder::on_elicit) and its siblings). Each is
/// shared by all the clients: the server a request comes from is not passed on, as
/// `mcp_client::ClientBuilder`'s handlers do not know it either.
///
/// Two sets of handlers are equal when they hold the same closures (the same
/// allocations), since closures cannot be compared otherwise.
///
/// ```
/// use mcp_host::Handlers;
/// use mcp_types::{ElicitResult, ElicitResultAction};
///
/// let handlers = Handlers::new()
///     .on_elicit(|_| async { Ok(ElicitResult::new(ElicitResultAction::Decline)) });
/// assert!(handlers.elicits());
/// assert_eq!(handlers.clone(), handlers);
/// assert_ne!(handlers, Handlers::new());
/// ```
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct Handlers {
    elicit: Option<ElicitFn>,
    sample: Option<SampleFn>,
    roots: Option<RootsFn>,
    sampling_tools: bool,
}

impl fmt::Debug for Handlers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handlers")
            .field("elicit", &self.elicit.is_some())
            .field("sample", &self.sample.is_some())
            .field("roots", &self.roots.is_some())
            .field("sampling_tools", &self.sampling_tools)
            .finish()
    }
}

/// The same closure, or both absent.
fn same<T: ?Sized>(a: Option<&Arc<T>>, b: Option<&Arc<T>>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => Arc::ptr_eq(a, b),
        (None, None) => true,
        _ => false,
    }
}

impl PartialEq for Handlers {
    fn eq(&self, other: &Self) -> bool {
        same(self.elicit.as_ref(), other.elicit.as_ref())
            && same(self.sample.as_ref(), other.sample.as_ref())
            && same(self.roots.as_ref(), other.roots.as_ref())
            && self.sampling_tools == other.sampling_tools
    }
}

impl Eq for Handlers {}

impl Handlers {
    /// No handlers: the clients declare none of the capabilities.
    pub fn new() -> Self {
        Handlers::default()
    }

    /// Answers the servers' elicitation requests (form and URL modes), as
    /// `mcp_client::ClientBuilder::on_elicit` does.
    #[must_use]
    pub fn on_elicit<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(ElicitRequestParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ElicitResult, String>> + Send + 'static,
    {
        self.elicit = Some(Arc::new(move |params| Box::pin(handler(params))));
        self
    }

    /// Answers the servers' sampling requests, as `mcp_client::ClientBuilder::on_sample`
    /// does.
    #[must_use]
    pub fn on_sample<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(CreateMessageRequestParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CreateMessageResult, String>> + Send + 'static,
    {
        self.sample = Some(Arc::new(move |params| Box::pin(handler(params))));
        self
    }

    /// Declares that the sampling handler supports tool use (`sampling.tools`), as
    /// `mcp_client::ClientBuilder::sampling_tools` does.
    #[must_use]
    pub fn sampling_tools(mut self, supported: bool) -> Self {
        self.sampling_tools = supported;
        self
    }

    /// Answers the servers' roots requests, as `mcp_client::ClientBuilder::on_roots` does.
    #[must_use]
    pub fn on_roots<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ListRootsResult, String>> + Send + 'static,
    {
        self.roots = Some(Arc::new(move || Box::pin(handler())));
        self
    }

    /// Whether an elicitation handler is installed.
    pub fn elicits(&self) -> bool {
        self.elicit.is_some()
    }

    /// Whether a sampling handler is installed.
    pub fn samples(&self) -> bool {
        self.sample.is_some()
    }

    /// Whether a roots handler is installed.
    pub fn answers_roots(&self) -> bool {
        self.roots.is_some()
    }

    /// `builder` with these handlers registered (each one shared, not copied).
    pub fn apply(&self, mut builder: ClientBuilder) -> ClientBuilder {
        if let Some(elicit) = &self.elicit {
            let elicit = Arc::clone(elicit);
            builder = builder.on_elicit(move |params| elicit(params));
        }
        if let Some(sample) = &self.sample {
            let sample = Arc::clone(sample);
            builder = builder
                .on_sample(move |params| sample(params))
                .sampling_tools(self.sampling_tools);
        }
        if let Some(roots) = &self.roots {
            let roots = Arc::clone(roots);
            builder = builder.on_roots(move || roots());
        }
        builder
    }
}
