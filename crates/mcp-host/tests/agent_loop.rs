//! The agent loop end to end: a scripted model drives two servers, one over stdio (this
//! very binary, re-run as a server) and one over Streamable HTTP (in process), through
//! parallel calls, an `isError` result, an unknown name, malformed arguments, a refused
//! approval and a tool-list change between rounds.
//!
//! The binary has its own `main` (`harness = false`): run as
//! `MCP_HOST_TEST_STDIO_SERVER=1 <binary>` it is the stdio server, and libtest would
//! otherwise write to its stdout.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_host::{
    Agent, AuditLog, BoxFuture, CallInfo, Catalog, Error, Host, HostConfig, HttpConfig, Message,
    Middleware, Model, Reply, StdioConfig, ToolCall, Vendor, require_approval_if_destructive,
};
use mcp_server::{Server, ToolDef};
use mcp_transport_http::{HttpServer, HttpServerConfig};
use mcp_types::{CallToolResult, ToolAnnotations};
use serde_json::json;
use tokio::sync::{Barrier, watch};

const SERVE_STDIO: &str = "MCP_HOST_TEST_STDIO_SERVER";

fn read_only() -> ToolAnnotations {
    let mut hints = ToolAnnotations::default();
    hints.read_only_hint = Some(true);
    hints
}

/// The stdio server: `add`, `fail` (always an `isError` result) and `wipe` (unannotated,
/// so the policy wants approval for it).
fn stdio_server() -> Server {
    let add = ToolDef::new(
        "add",
        json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}),
        |args, _| async move {
            let sum = args["a"].as_i64().unwrap_or(0) + args["b"].as_i64().unwrap_or(0);
            Ok(CallToolResult::text(sum.to_string()))
        },
    )
    .annotations(read_only());
    let fail = ToolDef::new("fail", json!({"type": "object"}), |_, _| async {
        Ok(CallToolResult::error("the disk is on fire"))
    })
    .annotations(read_only());
    let wipe = ToolDef::new("wipe", json!({"type": "object"}), |_, _| async {
        Ok(CallToolResult::text("wiped"))
    });
    Server::builder("local", "1")
        .tool(add)
        .tool(fail)
        .tool(wipe)
        .build()
        .unwrap()
}

/// The HTTP server: `meet` (two calls must be in flight at once to pass its barrier) and
/// `unlock`, which adds the tool `secret`.
fn http_server() -> Server {
    let barrier = Arc::new(Barrier::new(2));
    let meet = ToolDef::new("meet", json!({"type": "object"}), move |_, _| {
        let barrier = Arc::clone(&barrier);
        async move {
            barrier.wait().await;
            Ok(CallToolResult::text("met"))
        }
    })
    .annotations(read_only());
    let server = Server::builder("remote", "1").tool(meet).build().unwrap();
    let handle = server.clone();
    let unlock = ToolDef::new("unlock", json!({"type": "object"}), move |_, _| {
        let handle = handle.clone();
        async move {
            let secret = ToolDef::new("secret", json!({"type": "object"}), |_, _| async {
                Ok(CallToolResult::text("the secret is 42"))
            })
            .annotations(read_only());
            handle.add_tool(secret).unwrap();
            Ok(CallToolResult::text("unlocked"))
        }
    })
    .annotations(read_only());
    server.add_tool(unlock).unwrap();
    server
}

/// After `unlock` runs, waits until the host has heard of the list change, so that the
/// next round sees it (an explicit signal, not a sleep).
#[derive(Clone, Default)]
struct AwaitChange(Arc<Mutex<Option<watch::Receiver<u64>>>>);

impl Middleware for AwaitChange {
    fn after<'a>(
        &'a self,
        call: &'a CallInfo,
        _result: &'a CallToolResult,
        _elapsed: Duration,
    ) -> BoxFuture<'a, ()> {
        let receiver = self.0.lock().unwrap().clone();
        let unlock = call.tool == "unlock";
        Box::pin(async move {
            if let (true, Some(mut receiver)) = (unlock, receiver) {
                let changed = receiver.wait_for(|n| *n >= 1);
                tokio::time::timeout(Duration::from_secs(20), changed)
                    .await
                    .expect("the host heard of the change")
                    .unwrap();
            }
        })
    }
}

type Step = Box<dyn Fn(&Catalog, &[Message]) -> Reply + Send + Sync>;

/// A model that replays a script, one step per round, and checks what it is shown.
struct Scripted {
    steps: Vec<Step>,
    round: Mutex<usize>,
}

impl Model for Scripted {
    fn respond<'a>(
        &'a self,
        catalog: &'a Catalog,
        messages: &'a [Message],
    ) -> BoxFuture<'a, Result<Reply, Error>> {
        let round = {
            let mut round = self.round.lock().unwrap();
            *round += 1;
            *round - 1
        };
        let reply = match self.steps.get(round) {
            Some(step) => Ok(step(catalog, messages)),
            None => Err(Error::Model("the script has ended".to_owned())),
        };
        Box::pin(async move { reply })
    }
}

fn names(catalog: &Catalog) -> Vec<&str> {
    catalog.entries().iter().map(|e| e.name.as_str()).collect()
}

fn last_results(messages: &[Message]) -> &[mcp_host::ToolOutcome] {
    match messages.last() {
        Some(Message::ToolResults(outcomes)) => outcomes,
        other => panic!("expected tool results, got {other:?}"),
    }
}

fn text(outcome: &mcp_host::ToolOutcome) -> String {
    outcome.to_openai_chat()["content"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn script() -> Vec<Step> {
    vec![
        // Round 1: six calls at once, in OpenAI's shape.
        Box::new(|catalog, _| {
            assert_eq!(
                names(catalog),
                [
                    "local__add",
                    "local__fail",
                    "local__wipe",
                    "remote__meet",
                    "remote__unlock"
                ]
            );
            assert!(catalog.resolve("local__wipe").unwrap().requires_approval);
            let message = json!({"role": "assistant", "tool_calls": [
                {"id": "c_add", "type": "function", "function": {"name": "local__add", "arguments": "{\"a\": 2, \"b\": 3}"}},
                {"id": "c_m1", "type": "function", "function": {"name": "remote__meet", "arguments": "{}"}},
                {"id": "c_m2", "type": "function", "function": {"name": "remote__meet", "arguments": ""}},
                {"id": "c_fail", "type": "function", "function": {"name": "local__fail", "arguments": "{}"}},
                {"id": "c_unknown", "type": "function", "function": {"name": "nope__nothing", "arguments": "{}"}},
                {"id": "c_bad", "type": "function", "function": {"name": "local__add", "arguments": "{\"a\": "}},
                {"id": "c_wipe", "type": "function", "function": {"name": "local__wipe", "arguments": "{}"}}
            ]});
            Reply::ToolCalls {
                text: None,
                calls: ToolCall::from_openai_message(&message).unwrap(),
            }
        }),
        // Round 2: every result matched to its call; then unlock, in Anthropic's shape.
        Box::new(|_, messages| {
            let results = last_results(messages);
            let ids: Vec<&str> = results.iter().map(|o| o.call_id.as_str()).collect();
            assert_eq!(
                ids,
                [
                    "c_add",
                    "c_m1",
                    "c_m2",
                    "c_fail",
                    "c_unknown",
                    "c_bad",
                    "c_wipe"
                ]
            );
            let errors: Vec<bool> = results
                .iter()
                .map(mcp_host::ToolOutcome::is_error)
                .collect();
            assert_eq!(errors, [false, false, false, true, true, true, true]);
            assert_eq!(text(&results[0]), "5");
            assert_eq!(text(&results[1]), "met");
            assert_eq!(text(&results[3]), "Error: the disk is on fire");
            assert!(text(&results[4]).contains("no tool named `nope__nothing`"));
            assert!(text(&results[5]).contains("not valid JSON"));
            assert!(text(&results[6]).contains("not approved"));
            assert_eq!(
                results[3].to_anthropic(),
                json!({"type": "tool_result", "tool_use_id": "c_fail",
                       "content": [{"type": "text", "text": "the disk is on fire"}], "is_error": true})
            );
            let block = json!({"type": "tool_use", "id": "toolu_unlock", "name": "remote__unlock", "input": {}});
            Reply::ToolCalls {
                text: Some("Unlocking.".to_owned()),
                calls: ToolCall::from_anthropic_content(&json!([block])).unwrap(),
            }
        }),
        // Round 3: the new tool is there, because the catalog was refreshed between rounds.
        Box::new(|catalog, messages| {
            assert_eq!(text(&last_results(messages)[0]), "unlocked");
            assert!(
                names(catalog).contains(&"remote__secret"),
                "{:?}",
                names(catalog)
            );
            let declarations = catalog.declarations(Vendor::Gemini);
            assert!(declarations.iter().any(|d| d["name"] == "remote__secret"));
            Reply::ToolCalls {
                text: None,
                calls: vec![ToolCall::new(
                    "g_secret",
                    "remote__secret",
                    serde_json::Map::new(),
                )],
            }
        }),
        Box::new(|_, messages| {
            let secret = text(&last_results(messages)[0]);
            Reply::Answer(format!("The answer: {secret}"))
        }),
    ]
}

async fn the_loop_drives_two_servers() {
    // The HTTP server, in process.
    let running = HttpServer::bind(
        HttpServer::DEFAULT_ADDR,
        http_server(),
        HttpServerConfig::default(),
    )
    .await
    .unwrap();
    // The stdio server: this binary, run again in server mode.
    let exe = std::env::current_exe().unwrap();
    let config = HostConfig::new()
        .server(
            "local",
            StdioConfig::new(exe.to_string_lossy()).env(SERVE_STDIO, "1"),
        )
        .server("remote", HttpConfig::new(running.url()));

    let audit = AuditLog::new();
    let await_change = AwaitChange::default();
    let host = Host::builder()
        .config(config)
        .policy(require_approval_if_destructive)
        .approver(|call: CallInfo| async move { call.tool != "wipe" })
        .middleware(audit.clone())
        .middleware(await_change.clone())
        .connect()
        .await
        .unwrap();
    assert!(host.failures().is_empty(), "{:?}", host.failures());
    *await_change.0.lock().unwrap() = Some(host.changes());

    let model = Scripted {
        steps: script(),
        round: Mutex::new(0),
    };
    let conversation = Agent::new(&host, model)
        .max_rounds(6)
        .run("Go.")
        .await
        .unwrap();
    assert_eq!(conversation.answer, "The answer: the secret is 42");
    assert_eq!(conversation.rounds, 4);
    // User, then assistant and results for three rounds, then the answer.
    assert_eq!(conversation.messages.len(), 8);

    // Audited: every call that reached the hooks (not the unknown name or the bad JSON).
    let audited: Vec<(String, bool)> = audit
        .entries()
        .into_iter()
        .map(|e| (e.call.call_id, e.is_error))
        .collect();
    assert_eq!(audited.len(), 7, "{audited:?}");
    for id in [
        "c_add",
        "c_m1",
        "c_m2",
        "c_fail",
        "c_wipe",
        "toolu_unlock",
        "g_secret",
    ] {
        assert!(audited.iter().any(|(i, _)| i == id), "{id} in {audited:?}");
    }

    // A model that never answers stops at the round limit.
    let looping = Scripted {
        steps: (0..3)
            .map(|_| -> Step {
                Box::new(|_, _| Reply::ToolCalls {
                    text: None,
                    calls: vec![ToolCall::new("x", "local__add", serde_json::Map::new())],
                })
            })
            .collect(),
        round: Mutex::new(0),
    };
    let limited = Agent::new(&host, looping).max_rounds(3).run("Loop.").await;
    assert!(matches!(limited, Err(Error::RoundLimit(3))), "{limited:?}");

    host.shutdown().await;
    running.shutdown(Duration::from_secs(1)).await;
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    if std::env::var_os(SERVE_STDIO).is_some() {
        runtime.block_on(stdio_server().serve_stdio());
        // Do not wait for tasks still running (a subscription): stdin is closed.
        runtime.shutdown_background();
        return;
    }
    // libtest's arguments (a filter, `--nocapture`) are ignored: there is one test.
    runtime.block_on(async {
        tokio::time::timeout(Duration::from_mins(1), the_loop_drives_two_servers())
            .await
            .expect("the test finished in time");
    });
    eprintln!("test the_loop_drives_two_servers ... ok");
}
