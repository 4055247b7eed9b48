//! Observability: one `tracing` span per request the client sends, and (feature
//! `opentelemetry`) its W3C trace context in the request's `_meta`.
//!
//! Each request runs in a span named `mcp.request` at level `INFO`, with OpenTelemetry's
//! attribute names for MCP: `otel.name` (`tools/call echo`), `otel.kind` (`client`),
//! `mcp.method.name`, `gen_ai.tool.name` (for `tools/call`), `mcp.protocol.version`,
//! `mcp.era` (`stateless` for 2026-07-28, `initialize` for the earlier revisions) and
//! `network.transport` (`http`, `pipe` for stdio and in-process connections, `custom`).
//! Without a subscriber that enables it, the span is never built.
//!
//! With the `opentelemetry` feature, a request whose [`CallOptions`](crate::CallOptions)
//! carry no trace context of their own gets its span's, injected into `_meta`
//! (`traceparent`, `tracestate`) through the propagator installed with
//! `opentelemetry::global::set_text_map_propagator`
//! (<https://modelcontextprotocol.io/specification/2026-07-28/basic>), so that the
//! server's span joins the caller's trace. The initialize-era revisions allow `_meta` on
//! every request too, and `mcp-legacy`'s client sends it there the same way.

use tracing::Span;

/// The span of one request of `method` (to the tool `name`, for `tools/call`), at
/// protocol `version`, over `transport`.
pub(crate) fn request_span(
    method: &str,
    name: Option<&str>,
    version: &str,
    transport: &'static str,
) -> Span {
    let era = if version < "2026-07-28" {
        "initialize"
    } else {
        "stateless"
    };
    let span = tracing::info_span!(
        "mcp.request",
        otel.name = method,
        otel.kind = "client",
        mcp.method.name = method,
        gen_ai.tool.name = name,
        mcp.protocol.version = version,
        mcp.era = era,
        network.transport = transport,
    );
    if let Some(name) = name
        && !span.is_disabled()
    {
        span.record("otel.name", format!("{method} {name}").as_str());
    }
    span
}

/// The trace context to send: the caller's own, or else (feature `opentelemetry`) the
/// span's.
pub(crate) fn context(
    span: &Span,
    own: Option<&(String, Option<String>)>,
) -> Option<(String, Option<String>)> {
    if let Some(own) = own {
        return Some(own.clone());
    }
    #[cfg(feature = "opentelemetry")]
    if !span.is_disabled() {
        return otel::inject(span);
    }
    let _ = span;
    None
}

#[cfg(feature = "opentelemetry")]
mod otel {
    use opentelemetry::propagation::Injector;
    use tracing_opentelemetry::OpenTelemetrySpanExt as _;

    #[derive(Default)]
    struct Carrier {
        traceparent: Option<String>,
        tracestate: Option<String>,
    }

    impl Injector for Carrier {
        fn set(&mut self, key: &str, value: String) {
            match key {
                "traceparent" => self.traceparent = Some(value),
                "tracestate" if !value.is_empty() => self.tracestate = Some(value),
                _ => {}
            }
        }
    }

    /// `span`'s OpenTelemetry context as `traceparent` and `tracestate`, if the installed
    /// propagator writes one.
    pub(super) fn inject(span: &tracing::Span) -> Option<(String, Option<String>)> {
        let context = span.context();
        let mut carrier = Carrier::default();
        opentelemetry::global::get_text_map_propagator(|propagator| {
            propagator.inject_context(&context, &mut carrier);
        });
        carrier
            .traceparent
            .map(|parent| (parent, carrier.tracestate))
    }
}
