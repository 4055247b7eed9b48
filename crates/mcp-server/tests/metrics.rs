//! The `metrics` feature as an operator sees it: a scrape, in Prometheus's text format,
//! after real requests carries each metric with its labels (as the `prometheus` example
//! prints them).

use mcp_client::Client;
use mcp_server::tasks::{TaskSupport, Tasks};
use mcp_server::{Server, ToolDef};
use mcp_types::{CallToolResult, SubscriptionFilter};
use metrics_exporter_prometheus::PrometheusBuilder;

fn value(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.trim().parse().ok())
}

#[tokio::test]
async fn requests_errors_latency_listens_and_tasks_are_measured() {
    let handle = PrometheusBuilder::new().install_recorder().unwrap();
    let server = Server::builder("metered", "1.0.0")
        .tool(ToolDef::new(
            "echo",
            serde_json::json!({"type": "object"}),
            |_, _| async { Ok(CallToolResult::text("echo")) },
        ))
        .tool(
            ToolDef::new(
                "later",
                serde_json::json!({"type": "object"}),
                |_, _| async { Ok(CallToolResult::text("done")) },
            )
            .task_support(TaskSupport::Required),
        )
        .tasks(Tasks::in_memory())
        .build()
        .unwrap();
    let (client, _c, _s) =
        mcp_test_support::client::connect_in_memory(server, Client::builder("t", "1"), 16);

    client.list_tools(None).await.unwrap();
    for _ in 0..3 {
        client.call_tool("echo", ()).await.unwrap();
    }
    // Refused (the Tasks extension was not declared): an error, counted as one.
    assert!(client.call_tool("later", ()).await.is_err());
    let mut filter = SubscriptionFilter::new();
    filter.tools_list_changed = Some(true);
    let mut listen = client.listen(filter).await.unwrap();
    listen.next().await.unwrap();

    let text = handle.render();
    assert_eq!(
        value(
            &text,
            r#"mcp_server_requests_total{method="tools/call",outcome="ok"}"#
        ),
        Some(3.0),
        "{text}"
    );
    assert_eq!(
        value(
            &text,
            r#"mcp_server_requests_total{method="tools/call",outcome="error"}"#
        ),
        Some(1.0),
        "{text}"
    );
    assert_eq!(
        value(
            &text,
            r#"mcp_server_request_duration_seconds_count{method="tools/list"}"#
        ),
        Some(1.0),
        "{text}"
    );
    assert_eq!(
        value(&text, "mcp_server_listen_streams"),
        Some(1.0),
        "{text}"
    );
    drop(listen);
    // The stream's end is seen by the server a moment later.
    for _ in 0..100 {
        if value(&handle.render(), "mcp_server_listen_streams") == Some(0.0) {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("the listen stream is still counted: {}", handle.render());
}
