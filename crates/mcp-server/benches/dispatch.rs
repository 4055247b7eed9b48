//! The server core without a transport: `Server::handle` on a parsed request,
//! the way the engine calls it, for the hot methods and the validation of a realistic
//! input schema. `cargo bench -p mcp-server --bench dispatch`; the baselines in each
//! group (parsing the same params into a `Value`) put the figures in proportion.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use mcp_jsonrpc::{CancellationToken, NotificationSink, Request, RequestContext};
use mcp_server::{Server, ToolDef};
use mcp_types::{CallToolResult, RequestId};
use serde_json::value::RawValue;
use serde_json::{Value, json};

const META: &str = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Echo {
    text: String,
}

/// A search tool's arguments: nested objects, enums, bounds and a pattern.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[allow(dead_code, reason = "only deserialized and validated")]
struct Search {
    #[schemars(length(min = 1, max = 200))]
    query: String,
    #[schemars(range(min = 1, max = 100))]
    limit: u32,
    filters: Filters,
    #[schemars(length(max = 10))]
    tags: Vec<String>,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[allow(dead_code, reason = "only deserialized and validated")]
struct Filters {
    language: Language,
    #[schemars(regex(pattern = r"^\d{4}-\d{2}-\d{2}$"))]
    since: Option<String>,
    owners: Vec<String>,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
#[allow(dead_code, reason = "only deserialized and validated")]
enum Language {
    Rust,
    Go,
    Python,
}

fn server() -> Server {
    Server::builder("bench", "1.0.0")
        .tool(ToolDef::typed("echo", |args: Echo, _cx| async move {
            Ok(CallToolResult::text(args.text))
        }))
        .tool(ToolDef::typed("search", |args: Search, _cx| async move {
            Ok(CallToolResult::text(format!("{} results", args.limit)))
        }))
        .build()
        .expect("a valid server")
}

fn request(method: &str, params: &Value) -> Request {
    let raw = RawValue::from_string(params.to_string()).expect("valid JSON");
    Request::new(RequestId::Integer(1), method, Some(raw))
}

fn context() -> RequestContext {
    let (tx, _rx) = tokio::sync::mpsc::channel(16);
    RequestContext::new(
        RequestId::Integer(1),
        CancellationToken::new(),
        NotificationSink::channel(tx),
    )
}

fn dispatch(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a runtime");
    let server = server();
    let meta: Value = serde_json::from_str(META).expect("valid JSON");
    let echo = json!({"name": "echo", "arguments": {"text": "0123456789abcdef"}, "_meta": meta});
    let search = json!({"name": "search", "arguments": {
        "query": "mcp server", "limit": 20, "tags": ["rust", "protocol"],
        "filters": {"language": "rust", "since": "2026-01-01", "owners": ["a", "b"]},
    }, "_meta": meta});
    let list = json!({"_meta": meta});

    let mut group = c.benchmark_group("dispatch");
    let echo_text = echo.to_string();
    group.bench_function("baseline_parse_params_value", |b| {
        b.iter(|| serde_json::from_str::<Value>(black_box(&echo_text)));
    });
    for (name, method, params) in [
        ("tools_call_echo", "tools/call", &echo),
        ("tools_call_search_validated", "tools/call", &search),
        ("tools_list", "tools/list", &list),
        ("server_discover", "server/discover", &list),
    ] {
        group.bench_function(name, |b| {
            b.iter(|| {
                let outcome = runtime.block_on(server.handle(request(method, params), context()));
                assert!(outcome.is_ok(), "{name}: {outcome:?}");
                outcome
            });
        });
    }
    group.finish();
}

criterion_group!(benches, dispatch);
criterion_main!(benches);
