//! Fault injection over stdio: a real server process, `mcp-dual-era-demo
//! --faults`, killed mid-request, mid-stream and mid-restart, and a server that never
//! answers. Each test states the outcome <https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/stdio>, the
//! cancellation rules of <https://modelcontextprotocol.io/specification/2026-07-28/basic/utilities/cancellation> and the
//! client's documented restart policy promise (`mcp_client::ClientBuilder::spawn_stdio`,
//! `mcp_legacy::client::Connector::spawn_stdio`), and that it arrives without a hang:
//! every wait is bounded by [`SAFETY`], a net that a passing run never reaches.
//!
//! Both supervisors are driven: the modern client's own (`mcp-client`'s `restart.rs`) and
//! the dual-era one that `mcp-host` and the `mcp` tool use.

#![cfg(feature = "stdio")]

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_client::{CallOptions, Client, RestartPolicy};
use mcp_legacy::client::Connector;
use mcp_test_support::client::spawn_call;
use mcp_test_support::first_text as text;
use mcp_transport_stdio::{ServerCommand, StderrMode};
use mcp_types::JsonObject;
use serde_json::json;
use tokio::sync::mpsc;

const DEMO: &str = env!("CARGO_BIN_EXE_mcp-dual-era-demo");

/// A safety net for every wait: no outcome here takes more than a fraction of it.
const SAFETY: Duration = Duration::from_secs(20);

fn demo() -> ServerCommand {
    ServerCommand::new(DEMO).arg("--faults")
}

fn builder() -> mcp_client::ClientBuilder {
    Client::builder("faults", "1.0.0")
}

fn echo_args(text: &str) -> JsonObject {
    json!({ "text": text }).as_object().cloned().unwrap()
}

/// Awaits `future` within the safety net; a hang fails the test with `what`.
async fn bounded<T>(what: &str, future: impl Future<Output = T>) -> T {
    tokio::time::timeout(SAFETY, future)
        .await
        .unwrap_or_else(|_| panic!("{what}: no outcome within {SAFETY:?} (a hang)"))
}

/// Calls the `die` tool (the server exits mid-request): the error.
async fn die(client: &Client) -> mcp_client::Error {
    bounded("die", client.call_tool("die", JsonObject::new()))
        .await
        .unwrap_err()
}

/// Asserts that `echo` answers `text` within the safety net.
async fn echoes(client: &Client, text: &str) {
    let result = bounded("echo", client.call_tool("echo", echo_args(text)))
        .await
        .unwrap();
    assert_eq!(self::text(&result), text);
}

/// Asserts that the tool list (safe to repeat) is answered and names `hang`.
async fn lists_hang(client: &Client) {
    let tools = bounded("tools/list", client.list_tools_all())
        .await
        .unwrap();
    assert!(tools.iter().any(|t| t.name == "hang"), "{tools:?}");
}

/// The typed error of a call on a closed connection.
fn closed(err: &mcp_client::Error) -> bool {
    matches!(err, mcp_client::Error::Transport(e) if e.is_closed())
}

/// The error of a tool call that was sent and may have run.
fn may_have_run(err: &mcp_client::Error) -> bool {
    matches!(err, mcp_client::Error::MayHaveRun { method } if method == "tools/call")
}

fn kill(pid: u32) {
    let status = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success(), "kill -9 {pid}");
}

/// A call whose progress callback tells `tx` when the server's handler has started.
fn progress_signal() -> (CallOptions, mpsc::UnboundedReceiver<f64>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let options = CallOptions::default().progress(move |p| {
        let _ = tx.send(p.progress.as_f64().unwrap_or(f64::NAN));
    });
    (options, rx)
}

/// The stderr lines of the server processes, as they arrive.
fn stderr_lines(command: ServerCommand) -> (ServerCommand, mpsc::UnboundedReceiver<String>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let command = command.stderr(StderrMode::callback(move |line| {
        let _ = tx.send(line.to_owned());
    }));
    (command, rx)
}

async fn next_line(lines: &mut mpsc::UnboundedReceiver<String>, wanted: &str) {
    bounded(&format!("stderr line {wanted:?}"), async {
        while let Some(line) = lines.recv().await {
            if line.contains(wanted) {
                return;
            }
        }
        panic!("stderr closed before {wanted:?}");
    })
    .await;
}

/// Killed mid-request, with nobody to restart it: the pending call fails at once with
/// the typed transport error (`Error::Transport`, closed), never with a timeout, and so
/// does every later call on the dead connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_mid_request_fails_the_call_at_once() {
    let (client, server) = builder().connect_stdio(&demo()).unwrap();
    assert_eq!(
        text(&client.call_tool("echo", echo_args("up")).await.unwrap()),
        "up"
    );
    let started = Instant::now();
    let err = die(&client).await;
    assert!(closed(&err), "{err:?}");
    let after = bounded("a call on the dead connection", client.discover())
        .await
        .unwrap_err();
    assert!(closed(&after), "{after:?}");
    assert!(started.elapsed() < SAFETY / 2);
    let status = server.shutdown(Duration::from_secs(1)).await.unwrap();
    assert_eq!(status.code(), Some(70), "the status `die` exits with");
}

/// Killed mid-request under a supervisor: the call that was running fails with
/// `MayHaveRun` (a tool call is not safe to repeat), a new process is started, and the
/// next call succeeds on it. Both supervisors.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_supervised_server_killed_mid_request_is_restarted() {
    // The modern client's supervisor.
    let client = builder()
        .spawn_stdio(demo(), RestartPolicy::new(2))
        .unwrap();
    let first = client.server_pid().unwrap();
    let err = die(&client).await;
    assert!(may_have_run(&err), "{err:?}");
    echoes(&client, "again").await;
    assert_ne!(client.server_pid(), Some(first), "a new process");
    client.shutdown(Duration::from_secs(1)).await;

    // The dual-era supervisor (what `mcp-host` and `mcp` use).
    let supervised = Connector::new(builder())
        .spawn_stdio(demo(), RestartPolicy::new(2))
        .await
        .unwrap();
    let (client, supervisor) = (&supervised.client, &supervised.supervisor);
    let err = die(client).await;
    assert!(may_have_run(&err), "{err:?}");
    assert_eq!(supervisor.restarts(), 1);
    echoes(client, "again").await;
    client.shutdown(Duration::from_secs(1)).await;
}

/// Killed mid-stream: the handler has reported progress (the caller saw it) when the
/// process gets SIGKILL. The call fails with `MayHaveRun`, nothing already delivered is
/// taken back, and the restarted server answers the next call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_mid_stream_fails_the_call_and_is_restarted() {
    let client = Arc::new(
        builder()
            .spawn_stdio(demo(), RestartPolicy::new(1))
            .unwrap(),
    );
    let (options, mut progress) = progress_signal();
    let call = spawn_call(&client, "hang", options);
    let first = bounded("the first progress", progress.recv())
        .await
        .expect("progress before the kill");
    assert!(first.abs() < f64::EPSILON, "{first}");
    kill(client.server_pid().unwrap());
    let err = bounded("the killed call", call).await.unwrap().unwrap_err();
    assert!(may_have_run(&err), "{err:?}");
    assert!(progress.try_recv().is_err(), "no progress after the kill");
    echoes(&client, "after").await;
    client.shutdown(Duration::from_secs(1)).await;
}

/// A command whose second process dies as it starts (before it reads a byte): a crash
/// in the middle of a restart. The counter file numbers the processes.
fn flaky_restart(dir: &std::path::Path) -> ServerCommand {
    let counter = dir.join("starts");
    let script = r#"
n=$(cat "$COUNTER" 2>/dev/null || echo 0)
n=$((n + 1))
echo "$n" > "$COUNTER"
if [ "$n" -eq 2 ]; then exit 1; fi
exec "$DEMO" --faults
"#;
    ServerCommand::new("sh")
        .arg("-c")
        .arg(script)
        .env("COUNTER", counter)
        .env("DEMO", DEMO)
}

fn scratch_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "mcp-faults-{name}-{}-{:?}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Killed mid-restart: the process started after a crash dies at once. The request
/// that met it fails with a typed error (no hang, no loop), the next request starts a
/// third process, and a list (safe to repeat) is answered by it. Each failed start
/// counts against the restart budget. Both supervisors.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_dies_while_restarting_is_restarted_again() {
    // The modern client's supervisor: the restart itself only spawns, so the second
    // process dies under the first request that reaches it.
    let dir = scratch_dir("modern");
    let client = builder()
        .spawn_stdio(flaky_restart(&dir), RestartPolicy::new(3))
        .unwrap();
    let err = die(&client).await;
    assert!(
        matches!(&err, mcp_client::Error::MayHaveRun { .. }),
        "{err:?}"
    );
    // This request meets the dead second process, restarts a third and is re-sent.
    lists_hang(&client).await;
    let starts = std::fs::read_to_string(dir.join("starts")).unwrap();
    assert_eq!(starts.trim(), "3");
    client.shutdown(Duration::from_secs(1)).await;

    // The dual-era supervisor probes each new process: the second dies during its
    // probe, so the request that restarted it fails; the next one restarts again.
    let dir = scratch_dir("dual");
    let supervised = Connector::new(builder())
        .spawn_stdio(flaky_restart(&dir), RestartPolicy::new(3))
        .await
        .unwrap();
    let (client, supervisor) = (&supervised.client, &supervised.supervisor);
    let err = die(client).await;
    assert!(
        closed(&err),
        "the restart failed, and the call says so: {err:?}"
    );
    lists_hang(client).await;
    assert_eq!(
        supervisor.restarts(),
        2,
        "two restarts: one failed, one held"
    );
    let starts = std::fs::read_to_string(dir.join("starts")).unwrap();
    assert_eq!(starts.trim(), "3");
    client.shutdown(Duration::from_secs(1)).await;
    let _ = std::fs::remove_dir_all(dir);

    // A command that never starts again spends the budget and then says so, at once.
    let dir = scratch_dir("never");
    std::fs::write(dir.join("starts"), "1").unwrap();
    let dying = ServerCommand::new("sh").arg("-c").arg("exit 1");
    let client = builder().spawn_stdio(dying, RestartPolicy::new(2)).unwrap();
    for _ in 0..2 {
        assert!(bounded("discover", client.discover()).await.is_err());
    }
    let err = bounded("discover", client.discover()).await.unwrap_err();
    assert!(
        matches!(err, mcp_client::Error::RestartsExhausted(2)),
        "{err:?}"
    );
    client.shutdown(Duration::from_secs(1)).await;
    let _ = std::fs::remove_dir_all(dir);
}

/// A server that never answers: the call fails with `Error::Timeout` after the client's
/// timeout, the server is told with `notifications/cancelled` (its handler sees the
/// cancellation: it writes `hang cancelled`), and the connection goes on serving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_never_answers_times_out_and_is_told_to_cancel() {
    let (command, mut lines) = stderr_lines(demo());
    let (client, server) = builder()
        .timeout(Duration::from_millis(300))
        .connect_stdio(&command)
        .unwrap();
    let started = Instant::now();
    let err = bounded("hang", client.call_tool("hang", JsonObject::new()))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, mcp_client::Error::Timeout { method, after } if method == "tools/call" && *after >= Duration::from_millis(300)),
        "{err:?}"
    );
    assert!(started.elapsed() >= Duration::from_millis(300));
    next_line(&mut lines, "hang started").await;
    next_line(&mut lines, "hang cancelled").await;
    let result = bounded("echo", client.call_tool("echo", echo_args("still here")))
        .await
        .unwrap();
    assert_eq!(text(&result), "still here");
    let _ = server.shutdown(Duration::from_secs(1)).await;
}

/// A client that goes away mid-call (its end of the pipes closes: the `ServerConnection`
/// shuts down while the call runs, with the default graces): the server's handler is
/// cancelled once the engine's `eof_grace` (1 s) has passed, the process exits on its
/// own at the end of its stdin before the client's `SIGTERM` (after 2 s) is due, and the
/// caller gets a typed error, not a hang.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_vanishes_mid_call_cancels_the_handler_and_the_server_exits() {
    let (command, mut lines) = stderr_lines(demo());
    let (client, server) = builder().connect_stdio(&command).unwrap();
    let client = Arc::new(client);
    let call = tokio::spawn({
        let client = Arc::clone(&client);
        async move { client.call_tool("hang", JsonObject::new()).await }
    });
    next_line(&mut lines, "hang started").await;
    let status = bounded("shutdown", server.shutdown(Duration::from_millis(50)))
        .await
        .unwrap();
    next_line(&mut lines, "hang cancelled").await;
    assert!(
        status.success(),
        "the server exits by itself when stdin closes: {status:?}"
    );
    let err = bounded("the call", call).await.unwrap().unwrap_err();
    assert!(matches!(&err, mcp_client::Error::Transport(_)), "{err:?}");
}
