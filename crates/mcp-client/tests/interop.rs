//! Interop: this client against the official SDK servers in 2026-07-28 mode — the
//! TypeScript SDK v2 (`@modelcontextprotocol/server`) and the Python SDK (`mcp` 2.x) — over
//! stdio and Streamable HTTP. The peers and their pinned versions live in `interop/`;
//! `interop/setup.sh` installs them (once per test binary; a setup failure fails the tests).

use std::fs::File;
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use mcp_client::{Client, Error};
use mcp_test_support::setup_once;
use mcp_transport_http::HttpClientConfig;
use mcp_transport_stdio::{ServerCommand, StderrMode};
use mcp_types::{ContentBlock, EmbeddedResourceResource, JsonObject, OrderedMap};
use serde_json::json;

/// How long one request may take before the test fails.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// How long an HTTP server may take to start accepting connections.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(30);

fn interop_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../interop")
}

/// Runs `interop/setup.sh` once per test binary and panics, with its output, if it fails.
fn setup() {
    setup_once(&interop_dir().join("setup.sh"));
}

#[derive(Clone, Copy, Debug)]
enum Sdk {
    TypeScript,
    Python,
}

impl Sdk {
    /// The SDK's stdio server, installed (once per test binary) and ready to spawn.
    fn command(self) -> ServerCommand {
        setup();
        let (program, script) = self.program();
        ServerCommand::new(program)
            .arg(script)
            .current_dir(interop_dir())
            .inherit_var("PATH")
            .inherit_var("HOME")
    }

    fn name(self) -> &'static str {
        match self {
            Sdk::TypeScript => "ts",
            Sdk::Python => "py",
        }
    }

    /// The interpreter and the script, to which `--http PORT` may be appended.
    fn program(self) -> (PathBuf, PathBuf) {
        let dir = interop_dir();
        match self {
            Sdk::TypeScript => (PathBuf::from("node"), dir.join("ts-server.mjs")),
            Sdk::Python => (dir.join(".venv/bin/python"), dir.join("py-server.py")),
        }
    }
}

fn client() -> mcp_client::ClientBuilder {
    Client::builder("mcp-client-interop", "0.0.0").timeout(REQUEST_TIMEOUT)
}

/// An HTTP server process, killed when dropped (on every path, panics included).
struct HttpServer {
    child: Child,
    log: PathBuf,
    url: String,
}

impl HttpServer {
    /// Starts `sdk`'s server on a free port and waits until it accepts connections.
    fn start(sdk: Sdk) -> HttpServer {
        let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .and_then(|listener| listener.local_addr())
            .expect("pick a free port")
            .port();
        let log =
            Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("interop-{}-http.log", sdk.name()));
        let (program, script) = sdk.program();
        let stdout = File::create(&log).expect("create the server log");
        let stderr = stdout.try_clone().expect("clone the server log");
        let child = Command::new(program)
            .arg(script)
            .args(["--http", &port.to_string()])
            .current_dir(interop_dir())
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(stderr)
            .spawn()
            .expect("start the HTTP server");
        let mut server = HttpServer {
            child,
            log,
            url: format!("http://127.0.0.1:{port}/mcp"),
        };
        let deadline = Instant::now() + STARTUP_TIMEOUT;
        loop {
            if let Some(status) = server.child.try_wait().expect("poll the server") {
                panic!(
                    "the {sdk:?} HTTP server exited ({status}):\n{}",
                    server.log()
                );
            }
            if TcpStream::connect((Ipv4Addr::LOCALHOST, port)).is_ok() {
                return server;
            }
            assert!(
                Instant::now() < deadline,
                "the {sdk:?} HTTP server did not listen on port {port} within {STARTUP_TIMEOUT:?}:\n{}",
                server.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            eprintln!(
                "--- server log ({}) ---\n{}",
                self.log.display(),
                self.log()
            );
        }
    }
}

fn object(value: &serde_json::Value) -> JsonObject {
    value.as_object().expect("an object").clone()
}

/// The scenario every SDK × transport pair runs.
async fn exercise(sdk: Sdk, client: &Client) {
    let discovered = client.discover().await.expect("server/discover");
    assert!(
        discovered
            .supported_versions
            .iter()
            .any(|v| v == "2026-07-28"),
        "supportedVersions: {:?}",
        discovered.supported_versions
    );
    assert_eq!(client.protocol_version(), "2026-07-28");

    let tools = client.list_tools_all().await.expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert!(
        names.contains(&"add") && names.contains(&"fail"),
        "tools: {names:?}"
    );

    let sum = client
        .call_tool("add", object(&json!({"a": 2, "b": 3})))
        .await
        .expect("tools/call add");
    assert_eq!(sum.structured_content, Some(json!({"sum": 5})), "{sum:?}");
    assert_ne!(sum.is_error, Some(true), "{sum:?}");
    assert!(
        sum.content
            .iter()
            .any(|c| matches!(c, ContentBlock::TextContent(t) if t.text.contains('5'))),
        "{sum:?}"
    );

    let failed = client
        .call_tool("fail", JsonObject::new())
        .await
        .expect("tools/call fail is a result, not an error");
    assert_eq!(failed.is_error, Some(true), "{failed:?}");

    let unknown = client.call_tool("no-such-tool", JsonObject::new()).await;
    match sdk {
        // The spec's answer: a JSON-RPC error (the TS SDK says -32602).
        Sdk::TypeScript => {
            let error = unknown.expect_err("an unknown tool is a protocol error");
            assert!(
                matches!(&error, Error::Protocol(e) if e.code.0 == -32602),
                "{error:?}"
            );
        }
        // The Python SDK's `MCPServer` (2.3.0) answers an unknown tool with an `isError`
        // result ("Unknown tool: …", `ToolManager.call_tool` raises `ToolError`) rather than
        // a JSON-RPC error; our client must surface that as a tool failure.
        Sdk::Python => {
            let result = unknown.expect("the Python SDK answers an unknown tool with a result");
            assert_eq!(result.is_error, Some(true), "{result:?}");
        }
    }

    let read = client
        .read_resource("test://hello")
        .await
        .expect("resources/read");
    assert!(
        matches!(
            read.contents.as_slice(),
            [EmbeddedResourceResource::TextResourceContents(t)] if t.uri == "test://hello" && t.text == "Hello, world!"
        ),
        "{read:?}"
    );

    let mut args = OrderedMap::new();
    args.insert("name", "Ada".to_owned());
    let prompt = client.get_prompt("greet", args).await.expect("prompts/get");
    assert!(
        prompt
            .messages
            .iter()
            .any(|m| matches!(&m.content, ContentBlock::TextContent(t) if t.text.contains("Ada"))),
        "{prompt:?}"
    );
}

async fn over_stdio(sdk: Sdk) {
    let command = sdk
        .command()
        // Captured by the test harness and shown when the test fails.
        .stderr(StderrMode::Callback(std::sync::Arc::new(|line| {
            eprintln!("[server] {line}");
        })));
    let (client, connection) = client().connect_stdio(&command).expect("spawn the server");
    // A panic drops `connection`, which kills the server's process group.
    exercise(sdk, &client).await;
    drop(client);
    connection
        .shutdown(Duration::from_secs(1))
        .await
        .expect("shut the server down");
}

async fn over_http(sdk: Sdk) {
    setup();
    let server = HttpServer::start(sdk);
    let client = client()
        .connect_http(&server.url, HttpClientConfig::default())
        .expect("HTTP client");
    exercise(sdk, &client).await;
    drop(server);
}

/// One test a row: `name: scenario(sdk);`.
macro_rules! sdk_tests {
    ($($name:ident: $scenario:ident($sdk:expr);)*) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() {
                $scenario($sdk).await;
            }
        )*
    };
}

sdk_tests! {
    typescript_sdk_over_stdio: over_stdio(Sdk::TypeScript);
    typescript_sdk_over_http: over_http(Sdk::TypeScript);
    python_sdk_over_stdio: over_stdio(Sdk::Python);
    python_sdk_over_http: over_http(Sdk::Python);
}

/// Kills the server with SIGKILL and waits until it is gone (or a zombie) so the next
/// request meets a dead server.
fn crash(pid: u32) {
    let status = Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .expect("run kill");
    assert!(status.success(), "kill -9 {pid}");
    for _ in 0..200 {
        let state = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        if state.is_empty()
            || state
                .lines()
                .any(|l| l.starts_with("State:") && l.contains('Z'))
        {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    panic!("process {pid} did not die");
}

/// Waits for the next event of `subscription`, which must be an acknowledgement (`what`
/// names the wait in a failure).
async fn acknowledged(subscription: &mut mcp_client::Subscription, what: &str) {
    let event = tokio::time::timeout(REQUEST_TIMEOUT, subscription.next())
        .await
        .expect(what);
    assert!(
        matches!(event, Some(mcp_client::ListenEvent::Acknowledged(_))),
        "{event:?}"
    );
}

/// A client that owns a child Python server, restarting it at most `restarts` times.
fn python_child(restarts: u32) -> Client {
    client()
        .spawn_stdio(
            Sdk::Python.command(),
            mcp_client::RestartPolicy::new(restarts),
        )
        .expect("spawn the server")
}

/// A client that owns its stdio server restarts it after a crash, re-sends only a request
/// that is safe to repeat, and gives up after its restart budget.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_server_is_restarted_and_only_safe_requests_are_resent() {
    let client = python_child(2);
    let mut args = mcp_types::OrderedMap::new();
    args.insert("name", "Ada".to_owned());
    client
        .get_prompt("greet", args.clone())
        .await
        .expect("a first prompt");
    client
        .list_tools_all()
        .await
        .expect("the tools, with their annotations");

    // prompts/get is safe to repeat: after the crash it is re-sent to the new server.
    let first = client.server_pid().expect("a server");
    crash(first);
    client
        .get_prompt("greet", args.clone())
        .await
        .expect("re-sent after the restart");
    let second = client.server_pid().expect("a new server");
    assert_ne!(first, second, "a new process");

    // `add` carries no read-only or idempotent hint: it is not re-sent.
    crash(second);
    let sum = serde_json::json!({"a": 1, "b": 2})
        .as_object()
        .cloned()
        .unwrap_or_default();
    let err = client.call_tool("add", sum.clone()).await.unwrap_err();
    assert!(
        matches!(&err, mcp_client::Error::MayHaveRun { method } if method == "tools/call"),
        "{err}"
    );
    assert!(
        client.call_tool("add", sum).await.is_ok(),
        "the restarted server answers"
    );

    // The budget was two restarts.
    crash(client.server_pid().expect("a server"));
    let err = client.get_prompt("greet", args).await.unwrap_err();
    assert!(
        matches!(err, mcp_client::Error::RestartsExhausted(2)),
        "{err}"
    );
    client.shutdown(std::time::Duration::from_secs(1)).await;
}

/// A subscription to a server the client owns survives a crash: once the server is
/// restarted the client subscribes again, and the new acknowledgement says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscription_is_renewed_after_a_restart() {
    let client = python_child(1);
    let mut filter = mcp_types::SubscriptionFilter::new();
    filter.tools_list_changed = Some(true);
    let mut subscription = client.listen(filter).await.expect("listen");
    acknowledged(&mut subscription, "an acknowledgement in time").await;
    let before = subscription.id();

    crash(client.server_pid().expect("a server"));
    acknowledged(&mut subscription, "a renewal in time").await;
    assert!(
        before.is_some() && subscription.id().is_some(),
        "a listen request carries it"
    );
    client.shutdown(std::time::Duration::from_secs(1)).await;
}

/// MCP Apps against the official MCP Apps SDK: a TypeScript SDK v2 server whose tools and
/// UI resource come from `@modelcontextprotocol/ext-apps/server`'s `registerAppTool` and
/// `registerAppResource` (`interop/ts-apps-server.mjs`, the pattern of
/// <https://modelcontextprotocol.io/extensions/apps/build>). Our client declares the extension, reads each tool's
/// link (and the app-only visibility), and reads the UI resource checked, with its
/// sandbox metadata.
#[tokio::test]
async fn an_ext_apps_server_is_rendered_by_our_client() {
    use mcp_client::apps::{UiLink, Visibility, model_visible};

    setup();
    let command = ServerCommand::new("node")
        .arg(interop_dir().join("ts-apps-server.mjs"))
        .current_dir(interop_dir())
        .inherit_var("PATH")
        .inherit_var("HOME")
        .stderr(StderrMode::Callback(std::sync::Arc::new(|line| {
            eprintln!("[server] {line}");
        })));
    let (client, connection) = client()
        .apps()
        .connect_stdio(&command)
        .expect("spawn the server");
    let tools = client.list_tools_all().await.expect("tools/list");
    let view = "ui://get-time/mcp-app.html";
    let get_time = tools
        .iter()
        .find(|t| t.name == "get-time")
        .expect("get-time");
    let link = UiLink::of(get_time).expect("a UI link");
    assert_eq!(link.resource_uri, view);
    assert!(link.model_visible() && link.app_callable());
    let refresh = tools
        .iter()
        .find(|t| t.name == "refresh-time")
        .expect("refresh-time");
    assert_eq!(
        UiLink::of(refresh).expect("a UI link").visibility,
        [Visibility::App]
    );
    assert!(
        !model_visible(refresh),
        "an app-only tool is not for the model"
    );

    let ui = client
        .read_ui_resource(view)
        .await
        .expect("the UI resource");
    assert!(ui.html.starts_with("<!DOCTYPE html>"), "{}", ui.html);
    let csp = ui.ui.csp.expect("the content's csp");
    assert_eq!(
        csp.connect_domains.as_deref(),
        Some(&["https://api.example.com".to_owned()][..])
    );
    assert!(
        ui.ui
            .permissions
            .expect("permissions")
            .clipboard_write
            .is_some()
    );
    let result = client
        .call_tool("get-time", JsonObject::new())
        .await
        .expect("tools/call");
    assert_eq!(
        result.content[0],
        mcp_types::ContentBlock::text("2026-07-28T12:00:00Z")
    );
    drop(client);
    connection
        .shutdown(Duration::from_secs(1))
        .await
        .expect("shut the server down");
}
