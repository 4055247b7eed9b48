//! The `metrics` feature on the dual-era HTTP endpoint: the open initialize-era sessions
//! gauge goes up with a session and down when it ends, beside the core's request metrics.

use std::time::Duration;

use mcp_client::Client;
use mcp_legacy::client::{Connector, EraChoice};
use mcp_server::{Server, ToolDef};
use mcp_types::CallToolResult;
use metrics_exporter_prometheus::PrometheusBuilder;

fn value(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.trim().parse().ok())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_sessions_are_a_gauge() {
    let handle = PrometheusBuilder::new().install_recorder().unwrap();
    let server = Server::builder("metered", "1")
        .tool(ToolDef::new(
            "echo",
            serde_json::json!({"type": "object"}),
            |_, _| async { Ok(CallToolResult::text("echo")) },
        ))
        .build()
        .unwrap();
    let running = mcp_legacy::http::DualEraHttp::bind(
        "127.0.0.1:0".parse().unwrap(),
        server,
        mcp_transport_http::HttpServerConfig::default(),
        mcp_legacy::http::LegacyHttpConfig::default(),
    )
    .await
    .unwrap();
    let client = Connector::new(Client::builder("t", "1"))
        .era(EraChoice::Legacy)
        .connect_http(
            running.url(),
            mcp_transport_http::HttpClientConfig::default(),
        )
        .await
        .unwrap()
        .client;
    client.call_tool("echo", ()).await.unwrap();
    let text = handle.render();
    assert_eq!(
        value(&text, mcp_legacy::http::SESSIONS_GAUGE),
        Some(1.0),
        "{text}"
    );
    assert_eq!(
        value(
            &text,
            r#"mcp_server_requests_total{method="tools/call",outcome="ok"}"#
        ),
        Some(1.0),
        "{text}"
    );
    // Ended by the client (DELETE): no longer counted.
    client.shutdown(Duration::from_secs(2)).await;
    for _ in 0..100 {
        if value(&handle.render(), mcp_legacy::http::SESSIONS_GAUGE) == Some(0.0) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the ended session is still counted: {}", handle.render());
}
