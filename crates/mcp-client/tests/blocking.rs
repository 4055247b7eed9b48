//! The blocking client against this workspace's server, over stdio (this test binary,
//! started again as the server) and over Streamable HTTP on 127.0.0.1: connect, list and
//! call tools, list and read resources, get a prompt, close; and its refusal to run inside
//! an async runtime. Its own `main` (no test harness): the test's thread has no runtime,
//! as a synchronous program's would not.

use std::time::Duration;

use mcp_client::{Client, Error, blocking};
use mcp_server::{PromptDef, ResourceDef, Server, ToolDef};
use mcp_transport_http::{HttpClientConfig, HttpServer, HttpServerConfig};
use mcp_transport_stdio::ServerCommand;
use mcp_types::{
    CallToolResult, ContentBlock, EmbeddedResourceResource, GetPromptResult, JsonObject,
    OrderedMap, PromptMessage, Role, TextResourceContents,
};
use serde_json::json;

const SERVER_MODE: &str = "MCP_CLIENT_BLOCKING_TEST_SERVER";

fn server() -> Server {
    Server::builder("blocking-test", "1")
        .tool(ToolDef::new(
            "add",
            json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}),
            |args, _| async move {
                let sum = args["a"].as_i64().unwrap_or(0) + args["b"].as_i64().unwrap_or(0);
                Ok(CallToolResult::text(sum.to_string()))
            },
        ))
        .resource(ResourceDef::new("test://hello", "hello", |uri, _| async move {
            Ok(vec![EmbeddedResourceResource::TextResourceContents(
                TextResourceContents::new("Hello, world", uri),
            )])
        }))
        .prompt(
            PromptDef::new("greet", |args, _| async move {
                let who = args.get("who").cloned().unwrap_or_default();
                Ok(GetPromptResult::new(vec![PromptMessage::new(
                    ContentBlock::text(format!("hi {who}")),
                    Role::User,
                )]))
            })
            .argument("who", "who", true),
        )
        .build()
        .unwrap()
}

/// Every wrapped method, against the test server.
fn exercise(client: &blocking::Client) {
    let tools = client.list_tools_all().unwrap();
    assert_eq!(mcp_test_support::tool_names(&tools), ["add"]);
    let args: JsonObject = serde_json::from_value(json!({"a": 2, "b": 3})).unwrap();
    let result = client.call_tool("add", &args).unwrap();
    assert_eq!(mcp_test_support::first_text(&result), "5");
    let unknown = client.call_tool("nope", &JsonObject::new());
    assert!(
        matches!(&unknown, Err(Error::Protocol(_)))
            || unknown.as_ref().is_ok_and(|r| r.is_error == Some(true)),
        "{unknown:?}"
    );
    let resources = client.list_resources_all().unwrap();
    assert_eq!(resources[0].uri, "test://hello");
    let read = client.read_resource("test://hello").unwrap();
    assert_eq!(
        serde_json::to_value(&read).unwrap()["contents"][0]["text"],
        "Hello, world"
    );
    assert_eq!(client.list_prompts_all().unwrap()[0].name, "greet");
    let mut arguments = OrderedMap::new();
    arguments.insert("who".to_owned(), "Ada".to_owned());
    let prompt = client.get_prompt("greet", arguments).unwrap();
    assert_eq!(
        serde_json::to_value(&prompt).unwrap()["messages"][0]["content"]["text"],
        "hi Ada"
    );
    assert!(
        client
            .discover()
            .unwrap()
            .supported_versions
            .iter()
            .any(|v| v == "2026-07-28")
    );
}

fn over_stdio() {
    let me = std::env::current_exe().unwrap();
    let command = ServerCommand::new(me.to_str().unwrap()).env(SERVER_MODE, "1");
    let client =
        blocking::Client::connect_stdio(Client::builder("blocking", "1"), &command).unwrap();
    exercise(&client);
    let pid_before = client.as_async().server_pid();
    assert_eq!(pid_before, None, "connect_stdio does not supervise");
    client.close(Duration::from_secs(2)).unwrap();

    // Dropped without close: the server is killed, nothing panics.
    let client =
        blocking::Client::connect_stdio(Client::builder("blocking", "1"), &command).unwrap();
    assert_eq!(client.list_tools_all().unwrap().len(), 1);
    drop(client);
}

fn over_http() {
    // The server on a runtime of its own, on another thread.
    let server_runtime = tokio::runtime::Runtime::new().unwrap();
    let running = server_runtime
        .block_on(HttpServer::bind(
            "127.0.0.1:0".parse().unwrap(),
            server(),
            HttpServerConfig::default(),
        ))
        .unwrap();
    let client = blocking::Client::connect_http(
        Client::builder("blocking", "1"),
        running.url(),
        HttpClientConfig::default(),
    )
    .unwrap();
    exercise(&client);
    client.close(Duration::from_secs(1)).unwrap();
    server_runtime.block_on(running.shutdown(Duration::from_secs(1)));
}

fn refused_inside_a_runtime() {
    let server_runtime = tokio::runtime::Runtime::new().unwrap();
    let running = server_runtime
        .block_on(HttpServer::bind(
            "127.0.0.1:0".parse().unwrap(),
            server(),
            HttpServerConfig::default(),
        ))
        .unwrap();
    let url = running.url().to_owned();
    // Made outside, used inside: each method refuses, nothing panics, and dropping the
    // client inside the runtime does not panic either.
    let client = blocking::Client::connect_http(
        Client::builder("blocking", "1"),
        &url,
        HttpClientConfig::default(),
    )
    .unwrap();
    let inside = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    inside.block_on(async move {
        assert!(matches!(
            client.list_tools_all(),
            Err(Error::BlockingInAsync)
        ));
        assert!(matches!(
            client.call_tool("add", &JsonObject::new()),
            Err(Error::BlockingInAsync)
        ));
        let made_inside = blocking::Client::connect_http(
            Client::builder("blocking", "1"),
            &url,
            HttpClientConfig::default(),
        );
        assert!(matches!(made_inside, Err(Error::BlockingInAsync)));
        drop(client);
    });
    server_runtime.block_on(running.shutdown(Duration::from_secs(1)));
}

fn main() {
    if std::env::var_os(SERVER_MODE).is_some() {
        // Started by `over_stdio`: be the server.
        let runtime = tokio::runtime::Runtime::new().unwrap();
        runtime.block_on(server().serve_stdio());
        return;
    }
    for (name, test) in [
        ("over_stdio", over_stdio as fn()),
        ("over_http", over_http),
        ("refused_inside_a_runtime", refused_inside_a_runtime),
    ] {
        test();
        println!("test {name} ... ok");
    }
}
