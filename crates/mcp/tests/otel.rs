//! One trace across the wire: a caller's span, the client's request span, the server's
//! request span (parented through `_meta`'s `traceparent`) and the tool's own span, all
//! exported by OpenTelemetry's in-memory exporter.
#![cfg(all(feature = "opentelemetry", feature = "server", feature = "client"))]

use mcp::prelude::*;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use tracing::Instrument as _;
use tracing_subscriber::layer::SubscriberExt as _;

/// Answers from inside a span of its own.
#[tool]
async fn work() -> String {
    async { "done".to_owned() }
        .instrument(tracing::info_span!("tool.work"))
        .await
}

fn named<'a>(spans: &'a [SpanData], name: &str) -> &'a SpanData {
    spans.iter().find(|s| s.name == name).unwrap_or_else(|| {
        panic!(
            "no span {name:?} in {:?}",
            spans.iter().map(|s| &s.name).collect::<Vec<_>>()
        )
    })
}

/// An in-memory exporter behind this thread's subscriber (the test's runtime runs client
/// and server tasks on it), with the W3C propagator installed.
fn exporting() -> (
    InMemorySpanExporter,
    SdkTracerProvider,
    tracing::subscriber::DefaultGuard,
) {
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("test")));
    let guard = tracing::subscriber::set_default(subscriber);
    (exporter, provider, guard)
}

/// The spans exported once `count` have ended: a server's request span ends when its
/// future is dropped, after the answer went.
async fn finished(
    exporter: &InMemorySpanExporter,
    provider: &SdkTracerProvider,
    count: usize,
) -> Vec<SpanData> {
    let mut spans = Vec::new();
    for _ in 0..200 {
        provider.force_flush().unwrap();
        spans = exporter.get_finished_spans().unwrap();
        if spans.len() >= count {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    spans
}

#[tokio::test]
async fn a_call_is_one_trace_from_the_caller_to_the_tool() {
    let (exporter, provider, _guard) = exporting();

    let server = Server::builder("traced", "1.0").tool(work).build().unwrap();
    let ((a_read, a_write), (b_read, b_write)) = mcp::jsonrpc::memory::pair(16);
    let config = mcp::jsonrpc::PeerConfig::default;
    let (_server_peer, _server_conn) =
        mcp::jsonrpc::Peer::connect(b_read, b_write, server, config());
    let (client, _client_conn) = Client::builder("agent", "1.0").connect(a_read, a_write, config());

    let result = client
        .call_tool("work", ())
        .instrument(tracing::info_span!("agent.step"))
        .await
        .unwrap();
    assert_eq!(result.content[0], ContentBlock::text("done"));
    let spans = finished(&exporter, &provider, 4).await;
    let agent = named(&spans, "agent.step");
    let client_span = named(&spans, "tools/call work");
    let tool = named(&spans, "tool.work");
    let server_span = spans
        .iter()
        .find(|s| s.name == "tools/call" && s.span_kind == opentelemetry::trace::SpanKind::Server)
        .expect("the server's request span");
    assert_eq!(
        client_span.span_kind,
        opentelemetry::trace::SpanKind::Client
    );
    let trace = agent.span_context.trace_id();
    for span in [client_span, server_span, tool] {
        assert_eq!(
            span.span_context.trace_id(),
            trace,
            "{} is in another trace",
            span.name
        );
    }
    assert_eq!(client_span.parent_span_id, agent.span_context.span_id());
    assert_eq!(
        server_span.parent_span_id,
        client_span.span_context.span_id(),
        "the server's span is the client's child, through _meta"
    );
    assert_eq!(tool.parent_span_id, server_span.span_context.span_id());
    let attribute = |span: &SpanData, key: &str| {
        span.attributes
            .iter()
            .find(|kv| kv.key.as_str() == key)
            .map(|kv| kv.value.to_string())
    };
    assert_eq!(
        attribute(server_span, "gen_ai.tool.name").as_deref(),
        Some("work")
    );
    assert_eq!(
        attribute(server_span, "mcp.protocol.version").as_deref(),
        Some("2026-07-28")
    );
    assert_eq!(
        attribute(server_span, "mcp.era").as_deref(),
        Some("stateless")
    );
    assert_eq!(
        attribute(server_span, "network.transport").as_deref(),
        Some("pipe")
    );
}

/// The initialize era: a 2025-11-25 session over HTTP carries the trace context in
/// `_meta` just the same, and the server's span says which era it served.
#[cfg(all(feature = "legacy", feature = "http"))]
#[tokio::test]
async fn a_legacy_session_call_is_one_trace_too() {
    let (exporter, provider, _guard) = exporting();
    let server = Server::builder("traced", "1.0").tool(work).build().unwrap();
    let running = mcp::bind_http(server, "127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", running.local_addr());
    let connection = mcp::legacy::client::Connector::new(Client::builder("agent", "1.0"))
        .era(mcp::legacy::client::EraChoice::Version("2025-11-25".into()))
        .connect_http(&url, mcp::http::HttpClientConfig::default())
        .await
        .unwrap();
    let result = connection
        .client
        .call_tool("work", ())
        .instrument(tracing::info_span!("agent.step"))
        .await
        .unwrap();
    assert_eq!(result.content[0], ContentBlock::text("done"));

    let spans = finished(&exporter, &provider, 4).await;
    let agent = named(&spans, "agent.step");
    let tool = named(&spans, "tool.work");
    let server_span = spans
        .iter()
        .find(|s| s.span_kind == opentelemetry::trace::SpanKind::Server && s.name == "tools/call")
        .expect("the server's request span");
    assert_eq!(tool.span_context.trace_id(), agent.span_context.trace_id());
    assert_eq!(
        server_span.span_context.trace_id(),
        agent.span_context.trace_id(),
        "the legacy request carried the trace context"
    );
    assert_eq!(tool.parent_span_id, server_span.span_context.span_id());
    let era = server_span
        .attributes
        .iter()
        .find(|kv| kv.key.as_str() == "mcp.era")
        .map(|kv| kv.value.to_string());
    assert_eq!(era.as_deref(), Some("initialize"));
}

/// A call that the server runs as a task (the Tasks extension) is named in its request
/// span like any other: the name is recorded before the call becomes a task.
#[tokio::test]
async fn a_call_run_as_a_task_names_its_tool() {
    let (exporter, provider, _guard) = exporting();
    let server = Server::builder("traced", "1.0")
        .tool(
            ToolDef::new("later", json!({"type": "object"}), |_, _| async {
                Ok(CallToolResult::text("done"))
            })
            .task_support(mcp::server::tasks::TaskSupport::Required),
        )
        .tasks(mcp::server::tasks::Tasks::in_memory())
        .build()
        .unwrap();
    let ((a_read, a_write), (b_read, b_write)) = mcp::jsonrpc::memory::pair(16);
    let config = mcp::jsonrpc::PeerConfig::default;
    let (_server_peer, _server_conn) =
        mcp::jsonrpc::Peer::connect(b_read, b_write, server, config());
    let (client, _client_conn) = Client::builder("agent", "1.0")
        .tasks(mcp::client::TaskOptions::default())
        .connect(a_read, a_write, config());
    let call = client
        .call_tool_or_task(
            "later",
            JsonObject::new(),
            &mcp::client::CallOptions::default(),
        )
        .await
        .unwrap();
    assert!(matches!(call, mcp::client::ToolCall::Task(_)), "{call:?}");

    let spans = finished(&exporter, &provider, 2).await;
    let server_span = spans
        .iter()
        .find(|s| s.name == "tools/call" && s.span_kind == opentelemetry::trace::SpanKind::Server)
        .expect("the server's request span");
    let attribute = |key: &str| {
        server_span
            .attributes
            .iter()
            .find(|kv| kv.key.as_str() == key)
            .map(|kv| kv.value.to_string())
    };
    assert_eq!(attribute("gen_ai.tool.name").as_deref(), Some("later"));
    assert_eq!(attribute("mcp.era").as_deref(), Some("stateless"));
}
