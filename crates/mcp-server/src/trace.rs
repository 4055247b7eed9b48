//! Observability: one `tracing` span per request, and (feature `opentelemetry`) the
//! request's W3C trace context as its parent.
//!
//! Every request the server handles runs in a span named `mcp.request` at level `INFO`,
//! with the attribute names of OpenTelemetry's semantic conventions for MCP:
//!
//! | field | value |
//! |---|---|
//! | `otel.name` | the method (`tools/call`): the span starts before the params are read |
//! | `otel.kind` | `server` |
//! | `mcp.method.name` | the method |
//! | `jsonrpc.request.id` | the request's id |
//! | `gen_ai.tool.name` | the tool a `tools/call` runs |
//! | `gen_ai.prompt.name` | the prompt a `prompts/get` renders |
//! | `mcp.resource.uri` | the URI a `resources/read` reads |
//! | `mcp.protocol.version` | the request's protocol version |
//! | `mcp.era` | `stateless` (2026-07-28) or `initialize` (the earlier revisions, served by `mcp-legacy`) |
//! | `network.transport` | `http`, or `pipe` (stdio and in-process connections) |
//! | `enduser.id` | the authenticated principal's id |
//!
//! A span costs next to nothing unless a subscriber enables it: without one, or with a
//! filter above `INFO` for `mcp_server`, it is never built.
//!
//! With the `opentelemetry` feature, a request whose `_meta` carries `traceparent` (and
//! `tracestate`, `baggage`), as
//! <https://modelcontextprotocol.io/specification/2026-07-28/basic> defines, gets that
//! context as its span's parent, through the propagator installed with
//! `opentelemetry::global::set_text_map_propagator` (a `TraceContextPropagator` reads the
//! W3C headers; none is installed by default). The spans reach OpenTelemetry through
//! `tracing-opentelemetry`'s layer.

use mcp_jsonrpc::{Request, RequestContext};
use tracing::Span;
use tracing::field::Empty;

/// The span of one request, with what is known before its params are read; the rest is
/// recorded as it is read.
pub(crate) fn request_span(request: &Request, rpc: &RequestContext) -> Span {
    let method = request.method.as_str();
    let transport = rpc.transport_info();
    let span = tracing::info_span!(
        "mcp.request",
        otel.name = method,
        otel.kind = "server",
        mcp.method.name = method,
        jsonrpc.request.id = %rpc.id(),
        gen_ai.tool.name = Empty,
        gen_ai.prompt.name = Empty,
        mcp.resource.uri = Empty,
        mcp.protocol.version = Empty,
        mcp.era = Empty,
        network.transport = if transport.is_some() { "http" } else { "pipe" },
        enduser.id = transport.and_then(|t| t.principal()).map(mcp_jsonrpc::Principal::id),
    );
    #[cfg(feature = "opentelemetry")]
    if !span.is_disabled() {
        otel::adopt_parent(&span, request);
    }
    span
}

/// Records the tool a `tools/call` runs.
pub(crate) fn record_tool(name: &str) {
    record_target("gen_ai.tool.name", name);
}

/// Records the prompt a `prompts/get` renders.
pub(crate) fn record_prompt(name: &str) {
    record_target("gen_ai.prompt.name", name);
}

/// Records the URI a `resources/read` reads.
pub(crate) fn record_resource(uri: &str) {
    record_target("mcp.resource.uri", uri);
}

/// Records `target` in `field` of the current request span.
fn record_target(field: &str, target: &str) {
    let span = Span::current();
    if !span.is_disabled() {
        span.record(field, target);
    }
}

/// An initialize-era session's request, as this core serves it for `mcp-legacy`.
struct InSession {
    /// The session's revision (the request's `_meta` says 2026-07-28).
    version: &'static str,
    /// Whether the result was written in the initialize era's shape already.
    shaped: std::cell::Cell<bool>,
}

tokio::task_local! {
    /// The initialize-era session a request came in, while `mcp-legacy` runs it through
    /// this core.
    static SESSION: InSession;
}

/// Runs `request` (this core serving a request of an initialize-era session of
/// `version`) so that its span records that version and era. For `mcp-legacy`, which
/// translates such sessions; not otherwise useful.
#[doc(hidden)]
pub async fn in_session<F: std::future::Future>(version: &'static str, request: F) -> F::Output {
    in_session_shaped(version, request).await.0
}

/// As [`in_session`], and whether the core wrote the result in the initialize era's shape
/// already (without `resultType`, `ttlMs`, `cacheScope` and `_meta`'s `serverInfo`), so
/// that the caller need not read it to take them out. Only a result served from what the
/// core keeps written (a listing's page) is; any other is left for the caller.
#[doc(hidden)]
pub async fn in_session_shaped<F: std::future::Future>(
    version: &'static str,
    request: F,
) -> (F::Output, bool) {
    let session = InSession {
        version,
        shaped: std::cell::Cell::new(false),
    };
    SESSION
        .scope(session, async {
            let output = request.await;
            (output, SESSION.with(|s| s.shaped.replace(false)))
        })
        .await
}

/// Whether the request being served came in an initialize-era session (through
/// `mcp-legacy`, in process: no client can say so).
pub(crate) fn in_legacy_session() -> bool {
    SESSION.try_with(|_| ()).is_ok()
}

/// Tells [`in_session_shaped`]'s caller that the result is in the initialize era's shape.
pub(crate) fn mark_shaped() {
    let _ = SESSION.try_with(|s| s.shaped.set(true));
}

/// Records the request's protocol version, and its era.
pub(crate) fn record_version(version: &str) {
    let span = Span::current();
    if span.is_disabled() {
        return;
    }
    if let Ok(session) = SESSION.try_with(|session| session.version) {
        span.record("mcp.protocol.version", session);
        span.record("mcp.era", "initialize");
    } else {
        span.record("mcp.protocol.version", version);
        span.record("mcp.era", "stateless");
    }
}

#[cfg(feature = "opentelemetry")]
mod otel {
    use mcp_jsonrpc::Request;
    use opentelemetry::propagation::Extractor;
    use tracing_opentelemetry::OpenTelemetrySpanExt as _;

    /// The trace context members of a request's `_meta`.
    #[derive(serde::Deserialize)]
    struct Carrier {
        #[serde(rename = "_meta")]
        meta: Option<TraceMeta>,
    }

    #[derive(serde::Deserialize)]
    struct TraceMeta {
        traceparent: Option<String>,
        tracestate: Option<String>,
        baggage: Option<String>,
    }

    impl Extractor for TraceMeta {
        fn get(&self, key: &str) -> Option<&str> {
            match key {
                "traceparent" => self.traceparent.as_deref(),
                "tracestate" => self.tracestate.as_deref(),
                "baggage" => self.baggage.as_deref(),
                _ => None,
            }
        }

        fn keys(&self) -> Vec<&str> {
            [
                ("traceparent", &self.traceparent),
                ("tracestate", &self.tracestate),
                ("baggage", &self.baggage),
            ]
            .into_iter()
            .filter_map(|(key, value)| value.as_ref().map(|_| key))
            .collect()
        }
    }

    /// Makes the trace context of `request`'s `_meta`, if any, the parent of `span`. Params
    /// that do not read, or a context the propagator refuses, leave the span a root: the
    /// request itself is judged elsewhere.
    pub(super) fn adopt_parent(span: &tracing::Span, request: &Request) {
        let Some(params) = &request.params else {
            return;
        };
        let text = params.text();
        if !text.contains("traceparent") {
            return;
        }
        let Ok(Carrier { meta: Some(meta) }) = serde_json::from_str::<Carrier>(text) else {
            return;
        };
        let parent =
            opentelemetry::global::get_text_map_propagator(|propagator| propagator.extract(&meta));
        // Without tracing-opentelemetry's layer there is nothing to parent.
        let _ = span.set_parent(parent);
    }
}
