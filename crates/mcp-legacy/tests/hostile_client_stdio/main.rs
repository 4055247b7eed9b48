//! Hostile legacy servers against the dual-era client over stdio: the client
//! spawns a real child (`sh` relaying its stdin and stdout to two FIFOs this test holds),
//! so it runs exactly as `Connector::connect_stdio` runs it (the probe, the
//! `initialize` handshake, the line framing and the engine's stdio configuration), while
//! the test scripts the server's end line by line with `support::script`. The server
//! answers the probe as a legacy server does (-32601), then `initialize` with 2025-11-25
//! or 2024-11-05, then one request of each case with garbage, wrong ids, keys the client
//! must not match, deep nesting, batches, abusive requests of its own and notification
//! floods. Each case asserts the exact outcome (a typed error, a result, the JSON-RPC
//! error the client answers the server's request with, or a timeout: the response was
//! rightly never recognised); after each, the same connection must still carry a valid
//! call, and nothing may have panicked.
//!
//! The rules: <https://modelcontextprotocol.io/specification/2025-11-25/basic/transports> (stdio framing),
//! <https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle> (the handshake, version negotiation),
//! <https://modelcontextprotocol.io/specification/2025-11-25/basic> (JSON-RPC ids and messages), <https://modelcontextprotocol.io/specification/2025-11-25/client/roots>,
//! <https://modelcontextprotocol.io/specification/2025-11-25/client/sampling>, <https://modelcontextprotocol.io/specification/2025-11-25/client/elicitation> (requests a client answers only
//! for a capability it declared), and the same pages of 2024-11-05.

#![cfg(all(feature = "stdio", target_os = "linux"))]

mod handshake;
#[path = "../hostile_client_common/mod.rs"]
mod hostile_client_common;
#[path = "../../../mcp-client/tests/support/mod.rs"]
mod support;
mod table;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcp_client::{Client, Error};
use mcp_legacy::Error as ConnectError;
use mcp_legacy::client::{Connector, StdioConnection};
use mcp_transport_stdio::ServerCommand;
use mcp_types::Era;
use serde_json::{Value, json};
use support::hostile::{line, nested};
use support::script::{Script, response};
use support::{count_panics, panics};
use tokio::task::JoinHandle;

use hostile_client_common::builder;

/// The child: copies the FIFO `$0` to its stdout and its stdin to the FIFO `$1`; the end
/// of `$0` is the end of its stdout. (FIFOs rather than a socket: no Nagle delays.)
const RELAY: &str = r#"cat "$0" & exec cat > "$1""#;

/// The probe and handshake timeout: a handshake case that is never answered ends here.
/// Whole seconds: every other case must be answered inside it, through two `cat`
/// processes, on a loaded machine.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);
/// The legacy revisions each table runs in.
const ERAS: [&str; 2] = ["2025-11-25", "2024-11-05"];

/// How long the client's roots handler takes.
const ROOTS_DELAY: Duration = Duration::from_millis(5);

/// Two FIFOs in a directory of their own, removed on drop.
struct Fifos(std::path::PathBuf);

impl Fifos {
    fn new() -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "mcp-hostile-client-stdio-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        for name in ["to-client", "from-client"] {
            let status = std::process::Command::new("mkfifo")
                .arg(dir.join(name))
                .status()
                .unwrap();
            assert!(status.success(), "mkfifo");
        }
        Fifos(dir)
    }
}

impl Drop for Fifos {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Starts connecting a client to a fresh relay child; the server's end of its pipes.
async fn spawn() -> (JoinHandle<Result<StdioConnection, ConnectError>>, Script) {
    use tokio::net::unix::pipe;
    let fifos = Fifos::new();
    let (to_client, from_client) = (fifos.0.join("to-client"), fifos.0.join("from-client"));
    // Opened read-write, so that neither end waits for (or sees the end of) the child.
    let write = pipe::OpenOptions::new()
        .read_write(true)
        .open_sender(&to_client)
        .unwrap();
    let read = pipe::OpenOptions::new()
        .read_write(true)
        .open_receiver(&from_client)
        .unwrap();
    let command = ServerCommand::new("sh")
        .arg("-c")
        .arg(RELAY)
        .arg(&to_client)
        .arg(&from_client);
    let connecting = tokio::spawn(async move {
        let connected = Connector::new(builder(ROOTS_DELAY))
            .probe_timeout(PROBE_TIMEOUT)
            .connect_stdio(&command)
            .await;
        drop(fifos);
        connected
    });
    (connecting, Script::new(read, write))
}

/// The `initialize` result of a server of `version`.
fn initialize_result(version: &str) -> Value {
    json!({"protocolVersion": version, "capabilities": {"tools": {}},
           "serverInfo": {"name": "hostile", "version": "1"}})
}

/// Answers the probe as a legacy server answers it (-32601); returns `initialize`, for the
/// caller to answer.
async fn handshake(script: &mut Script) -> Value {
    let probe = script.request().await;
    assert_eq!(probe["method"], "server/discover", "{probe}");
    script
        .reply(
            &probe,
            json!({"error": {"code": -32601, "message": "Method not found"}}),
        )
        .await;
    let initialize = script.request().await;
    assert_eq!(initialize["method"], "initialize", "{initialize}");
    assert_eq!(initialize["params"]["protocolVersion"], "2025-11-25");
    initialize
}

/// A client in a legacy session of `version`, and the server's end.
async fn session(version: &str) -> (StdioConnection, Script) {
    let (connecting, mut script) = spawn().await;
    let initialize = handshake(&mut script).await;
    script
        .reply(&initialize, json!({ "result": initialize_result(version) }))
        .await;
    let initialized = script.request().await;
    assert_eq!(initialized["method"], "notifications/initialized");
    let connection = connecting.await.unwrap().expect("the handshake");
    assert_eq!(connection.verdict.era, Era::Legacy);
    assert_eq!(connection.verdict.version, version);
    (connection, script)
}

/// A valid legacy result for `request`'s method (no `resultType`).
fn valid_result(request: &Value) -> Value {
    match request["method"].as_str() {
        Some("tools/call") => json!({"content": []}),
        _ => json!({"tools": []}),
    }
}

/// The valid response to `request`, as a line.
fn valid(request: &Value) -> Vec<u8> {
    line(&response(request, json!({"result": valid_result(request)})))
}

/// The valid response with its id replaced by `id`.
fn with_id(request: &Value, id: Value) -> Vec<u8> {
    let mut message = response(request, json!({"result": valid_result(request)}));
    message["id"] = id;
    line(&message)
}

/// A response to `request` with this raw text as its result.
fn raw_result(request: &Value, result: &str) -> Vec<u8> {
    format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{result}}}"#,
        request["id"]
    )
    .into_bytes()
}

/// A request from the server.
fn server_request(id: &str, method: &str, params: Value) -> Value {
    let mut request = json!({"jsonrpc": "2.0", "id": id, "method": method});
    if !params.is_null() {
        request["params"] = params;
    }
    request
}

/// A valid call on the same connection succeeds, and is the very next thing the client
/// sends.
async fn probe(client: &Client, script: &mut Script, name: &str) {
    script.probe(client, name, valid).await;
}

#[tokio::test]
async fn the_session_table() {
    count_panics();
    for era in ERAS {
        let (connection, mut script) = session(era).await;
        for case in &table::cases() {
            table::check(&connection.client, &mut script, case, era).await;
        }
        // Dropped, not shut down: the process group is killed at once (a graceful stop
        // waits out the stdin grace, which these tests do not exercise).
        drop(connection);
    }
    assert_eq!(panics(), 0, "nothing may panic, even caught");
}

/// A server that stops mid-line: the call fails at once with the transport's typed
/// error (no timeout, no hang), and so does every later call on the connection.
#[tokio::test]
async fn a_half_line_at_end_of_stream_ends_the_connection_with_a_typed_error() {
    count_panics();
    for era in ERAS {
        for (name, tail) in [
            (
                "a half line",
                &br#"{"jsonrpc":"2.0","id":3,"result":{"to"#[..],
            ),
            ("nothing", &b""[..]),
            (
                "a whole response without its newline, for another id",
                &br#"{"jsonrpc":"2.0","id":0,"result":{}}"#[..],
            ),
        ] {
            let (connection, mut script) = session(era).await;
            let call = tokio::spawn({
                let client = connection.client.clone();
                async move { client.list_tools(None).await }
            });
            let request = script.request().await;
            assert_eq!(request["method"], "tools/list");
            script.write(tail).await;
            script.close().await;
            let outcome = tokio::time::timeout(Duration::from_secs(10), call)
                .await
                .unwrap_or_else(|_| panic!("{era}: {name}: a hang"))
                .unwrap();
            assert!(
                matches!(outcome, Err(Error::Transport(_))),
                "{era}: {name}: {outcome:?}"
            );
            let later =
                tokio::time::timeout(Duration::from_secs(10), connection.client.list_tools(None))
                    .await
                    .unwrap_or_else(|_| panic!("{era}: {name}: the next call hangs"));
            assert!(
                matches!(later, Err(Error::Transport(_))),
                "{era}: {name}: {later:?}"
            );
            // Dropped, not shut down: the process group is killed at once (a graceful stop
            // waits out the stdin grace, which these tests do not exercise).
            drop(connection);
        }
    }
    assert_eq!(panics(), 0, "nothing may panic, even caught");
}
