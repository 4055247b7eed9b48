//! The attribute macros, end to end: definitions made with `#[tool]`, `#[tools]`,
//! `#[prompt]` and `#[resource]`, served by a real server and called by a real client.

use std::sync::atomic::{AtomicU64, Ordering};

use mcp::prelude::*;
use mcp::server::{Args, Json};

/// Echoes its text back.
#[tool]
async fn echo(
    /// The text to echo.
    text: String,
) -> String {
    text
}

/// Adds two integers.
#[tool(name = "sum", title = "Sum", read_only, idempotent, open_world = false)]
fn add(a: i64, b: i64, maybe: Option<i64>) -> String {
    (a + b + maybe.unwrap_or(0)).to_string()
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Divide {
    /// The dividend.
    a: f64,
    /// The divisor.
    b: f64,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Quotient {
    quotient: f64,
}

/// Divides a by b.
#[tool(destructive = false)]
async fn divide(Args(args): Args<Divide>, cx: Context) -> Result<Json<Quotient>, String> {
    assert!(cx.transport().is_none() || cx.transport().is_some());
    if args.b == 0.0 {
        return Err("division by zero".into());
    }
    Ok(Json(Quotient {
        quotient: args.a / args.b,
    }))
}

/// Says who is asking.
#[tool]
async fn whoami(caller: Option<Caller>) -> String {
    caller.map_or_else(|| "anonymous".to_owned(), |c| c.0.id().to_owned())
}

/// Only for the authenticated.
#[tool]
async fn private(caller: Caller) -> String {
    caller.0.id().to_owned()
}

#[derive(Default)]
struct Counter {
    count: AtomicU64,
}

#[tools]
impl Counter {
    /// Adds `by` to the count.
    #[tool]
    async fn increment(&self, by: u64) -> String {
        (self.count.fetch_add(by, Ordering::Relaxed) + by).to_string()
    }

    /// The count, without changing it.
    #[tool(read_only)]
    async fn peek(&self) -> String {
        self.count.load(Ordering::Relaxed).to_string()
    }

    /// Needs no state.
    #[tool]
    fn constant() -> &'static str {
        "42"
    }

    fn not_a_tool(&self) -> u64 {
        self.count.load(Ordering::Relaxed)
    }
}

/// Asks for a review.
#[prompt(title = "Review")]
async fn review(
    /// The code.
    code: String,
    /// What to focus on.
    focus: Option<String>,
) -> String {
    format!(
        "Review ({}): {code}",
        focus.as_deref().unwrap_or("anything")
    )
}

/// The README.
#[resource(uri = "docs://readme", mime_type = "text/markdown")]
async fn readme() -> &'static str {
    "# Hello"
}

/// A user's profile.
#[resource(template = "users://{id}/profile{?fields}", name = "profile")]
async fn profile(id: u64, fields: Option<String>, uri: String) -> Result<String, String> {
    if id == 0 {
        return Err("no user 0".into());
    }
    Ok(format!("{id} {} {uri}", fields.unwrap_or_default()))
}

fn server() -> Server {
    Server::builder("macros", "1.0")
        .tool(echo)
        .tool(add)
        .tool(divide)
        .tool(whoami)
        .tool(private)
        .tools(Counter::default())
        .prompt(review)
        .resource(readme)
        .resource_template(profile)
        .build()
        .unwrap()
}

fn client(server: Server) -> (Client, impl Sized) {
    let ((a_read, a_write), (b_read, b_write)) = mcp::jsonrpc::memory::pair(16);
    let config = mcp::jsonrpc::PeerConfig::default;
    let (_server_peer, server_conn) =
        mcp::jsonrpc::Peer::connect(b_read, b_write, server, config());
    let (client, client_conn) = Client::builder("t", "1").connect(a_read, a_write, config());
    (client, (server_conn, client_conn))
}

fn text(result: &CallToolResult) -> &str {
    match &result.content[0] {
        ContentBlock::TextContent(t) => &t.text,
        other => panic!("not text: {other:?}"),
    }
}

#[tokio::test]
async fn the_definitions_are_what_the_functions_say() {
    let server = server();
    let echoed = server.tool("echo").unwrap();
    let echoed = echoed.tool();
    assert_eq!(echoed.description.as_deref(), Some("Echoes its text back."));
    let schema = serde_json::to_value(&echoed.input_schema).unwrap();
    assert_eq!(
        schema["properties"]["text"]["description"],
        "The text to echo."
    );
    assert_eq!(schema["required"], json!(["text"]));

    let sum = server.tool("sum").unwrap();
    let sum = sum.tool();
    assert_eq!(sum.title.as_deref(), Some("Sum"));
    let hints = sum.annotations.clone().unwrap();
    assert_eq!(hints.read_only_hint, Some(true));
    assert_eq!(hints.idempotent_hint, Some(true));
    assert_eq!(hints.open_world_hint, Some(false));
    assert_eq!(hints.destructive_hint, None);
    let schema = serde_json::to_value(&sum.input_schema).unwrap();
    assert_eq!(schema["required"], json!(["a", "b"]));

    let divided = server.tool("divide").unwrap();
    let output = serde_json::to_value(divided.tool().output_schema.as_ref().unwrap()).unwrap();
    assert_eq!(output["properties"]["quotient"]["type"], "number");
    let input = serde_json::to_value(&divided.tool().input_schema).unwrap();
    assert_eq!(input["properties"]["b"]["description"], "The divisor.");

    assert!(server.tool("increment").is_some() && server.tool("peek").is_some());
    assert!(server.tool("constant").is_some() && server.tool("not_a_tool").is_none());
    // The functions stay callable.
    assert_eq!(echo::call("x".into()).await, "x");
    assert_eq!(add::call(1, 2, None), "3");
    assert_eq!(Counter::default().not_a_tool(), 0);
}

#[tokio::test]
async fn a_client_calls_them() {
    let (client, _conns) = client(server());
    let r = client
        .call_tool("echo", json!({"text": "hi"}))
        .await
        .unwrap();
    assert_eq!(text(&r), "hi");
    let r = client
        .call_tool("sum", json!({"a": 2, "b": 3, "maybe": 4}))
        .await
        .unwrap();
    assert_eq!(text(&r), "9");
    // Arguments the schema refuses never reach the function.
    let r = client
        .call_tool("sum", json!({"a": "two", "b": 3}))
        .await
        .unwrap();
    assert_eq!(r.is_error, Some(true));

    let r = client
        .call_tool("divide", json!({"a": 1.0, "b": 4.0}))
        .await
        .unwrap();
    assert_eq!(r.structured_content.unwrap()["quotient"], 0.25);
    let r = client
        .call_tool("divide", json!({"a": 1.0, "b": 0.0}))
        .await
        .unwrap();
    assert_eq!((r.is_error, text(&r)), (Some(true), "division by zero"));

    // Extractors take nothing from the arguments: no schema property, and over an
    // unauthenticated connection no caller.
    let listed = client.list_tools_all().await.unwrap();
    let entry = listed.iter().find(|t| t.name == "whoami").unwrap();
    let schema = serde_json::to_value(&entry.input_schema).unwrap();
    assert!(
        schema
            .get("properties")
            .is_none_or(|p| p.as_object().unwrap().is_empty()),
        "{schema}"
    );
    assert_eq!(
        text(&client.call_tool("whoami", ()).await.unwrap()),
        "anonymous"
    );
    let r = client.call_tool("private", ()).await.unwrap();
    assert_eq!(
        (r.is_error, text(&r)),
        (Some(true), "this tool needs an authenticated caller")
    );

    // The tools of one value share it.
    client
        .call_tool("increment", json!({"by": 2}))
        .await
        .unwrap();
    let r = client
        .call_tool("increment", json!({"by": 3}))
        .await
        .unwrap();
    assert_eq!(text(&r), "5");
    assert_eq!(text(&client.call_tool("peek", ()).await.unwrap()), "5");
    assert_eq!(text(&client.call_tool("constant", ()).await.unwrap()), "42");

    let prompt = client.list_prompts_all().await.unwrap();
    let arguments = prompt[0].arguments.clone().unwrap();
    assert_eq!(
        arguments
            .iter()
            .map(|a| (a.name.as_str(), a.required, a.description.as_deref()))
            .collect::<Vec<_>>(),
        [
            ("code", Some(true), Some("The code.")),
            ("focus", Some(false), Some("What to focus on."))
        ]
    );
    let got = client
        .get_prompt("review", json!({"code": "x()"}))
        .await
        .unwrap();
    assert_eq!(
        got.messages[0].content,
        ContentBlock::text("Review (anything): x()")
    );
    let refused = client.get_prompt("review", json!({})).await;
    assert!(refused.is_err(), "a missing required argument: {refused:?}");

    let read = client.read_resource("docs://readme").await.unwrap();
    let contents = serde_json::to_value(&read.contents[0]).unwrap();
    assert_eq!(
        (contents["text"].as_str(), contents["mimeType"].as_str()),
        (Some("# Hello"), Some("text/markdown"))
    );
    let read = client
        .read_resource("users://7/profile?fields=name")
        .await
        .unwrap();
    let contents = serde_json::to_value(&read.contents[0]).unwrap();
    assert_eq!(contents["text"], "7 name users://7/profile?fields=name");
    // A variable that does not parse, and a handler's error.
    assert!(client.read_resource("users://seven/profile").await.is_err());
    assert!(client.read_resource("users://0/profile").await.is_err());
}
