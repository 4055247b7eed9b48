//! The whole stack over real pipes: the engine, the line framing and process management,
//! against the engine-based echo server and the misbehaving fixture.

use std::process::Stdio;
use std::time::{Duration, Instant};

use mcp_jsonrpc::{NoHandler, Peer, RequestOptions};
use mcp_transport_stdio::{ServerCommand, StderrMode, client_config, connect};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

const ECHO: &str = env!("CARGO_BIN_EXE_mcp-stdio-echo");
const FIXTURE: &str = env!("CARGO_BIN_EXE_mcp-stdio-fixture");

fn value(raw: &serde_json::value::RawValue) -> Value {
    serde_json::from_str(raw.get()).unwrap()
}

/// Sends every one of `params` to the echo server at once, and checks that each comes
/// back as it was sent.
async fn echo_all(peer: &Peer, params: impl IntoIterator<Item = Value>) {
    let mut calls = Vec::new();
    for params in params {
        let peer = peer.clone();
        calls.push(tokio::spawn(async move {
            let back = peer
                .request("echo", Some(&params), RequestOptions::default())
                .await
                .unwrap();
            assert_eq!(value(&back), params);
        }));
    }
    for call in calls {
        call.await.unwrap();
    }
}

#[tokio::test]
async fn requests_round_trip_through_a_real_server() {
    let (peer, server) = connect(&ServerCommand::new(ECHO), NoHandler, client_config()).unwrap();
    echo_all(
        &peer,
        (0..32).map(|n| json!({"n": n, "text": "line\nbreak"})),
    )
    .await;
    let err = peer
        .request("missing", None::<&Value>, RequestOptions::default())
        .await
        .unwrap_err();
    assert_eq!(
        err.remote().unwrap().code,
        mcp_types::ErrorCode::METHOD_NOT_FOUND
    );
    let status = server.shutdown(Duration::from_secs(1)).await.unwrap();
    assert!(
        status.success(),
        "the server exits by itself when stdin closes: {status}"
    );
}

#[tokio::test]
async fn large_results_and_small_ones_arrive_whole_and_in_order() {
    // Results of 16 KiB and more leave the server in pieces, written with `writev` into a
    // pipe that holds less than the largest of them; small ones go through the buffer.
    let (peer, server) = connect(&ServerCommand::new(ECHO), NoHandler, client_config()).unwrap();
    let lens = [10, 16 << 10, 20, 100_000, (16 << 10) - 20, 300_000, 5];
    let params = lens.iter().enumerate();
    echo_all(
        &peer,
        params.map(|(n, len)| json!({"n": n, "text": "é\n".repeat(len / 3)})),
    )
    .await;
    let status = server.shutdown(Duration::from_secs(1)).await.unwrap();
    assert!(status.success(), "{status}");
}

#[tokio::test]
async fn a_crash_fails_pending_requests_at_once_with_a_transport_error() {
    let command = ServerCommand::new(FIXTURE).args(["crash-on", "boom"]);
    let (peer, server) = connect(&command, NoHandler, client_config()).unwrap();
    let ok = peer
        .request("echo", Some(&json!({"a": 1})), RequestOptions::default())
        .await
        .unwrap();
    assert_eq!(value(&ok)["echo"], json!({"a": 1}));

    let started = Instant::now();
    let waiting = tokio::spawn({
        let peer = peer.clone();
        async move {
            peer.request(
                "slow",
                None::<&Value>,
                RequestOptions::default().timeout(Duration::from_mins(1)),
            )
            .await
        }
    });
    let err = peer
        .request("boom", None::<&Value>, RequestOptions::default())
        .await
        .unwrap_err();
    assert!(err.is_closed(), "{err}");
    assert!(
        err.to_string().contains("exit status: 3"),
        "names how the server ended: {err}"
    );
    assert!(err.remote().is_none(), "never mistaken for a server error");
    let other = waiting.await.unwrap().unwrap_err();
    assert!(other.is_closed(), "{other}");
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "failed when the server ended, not by the one-minute timeout"
    );
    assert!(
        peer.request("late", None::<&Value>, RequestOptions::default())
            .await
            .unwrap_err()
            .is_closed()
    );
    let status = server.shutdown(Duration::from_secs(1)).await.unwrap();
    assert_eq!(status.code(), Some(3));
}

#[tokio::test]
async fn lines_that_are_not_messages_are_skipped() {
    let command = ServerCommand::new(FIXTURE).arg("pollute");
    let (peer, server) = connect(&command, NoHandler, client_config()).unwrap();
    for n in 0..5 {
        let back = peer
            .request("echo", Some(&json!({"n": n})), RequestOptions::default())
            .await
            .unwrap();
        assert_eq!(value(&back)["echo"]["n"], n);
    }
    server.shutdown(Duration::from_secs(1)).await.unwrap();
}

#[tokio::test]
async fn a_stderr_flood_does_not_stall_requests() {
    let command = ServerCommand::new(FIXTURE)
        .arg("stderr-flood")
        .stderr(StderrMode::Discard);
    let (peer, server) = connect(&command, NoHandler, client_config()).unwrap();
    let back = tokio::time::timeout(
        Duration::from_secs(20),
        peer.request(
            "echo",
            Some(&json!("after the flood")),
            RequestOptions::default(),
        ),
    )
    .await
    .expect("answered")
    .unwrap();
    assert_eq!(value(&back)["echo"], "after the flood");
    server.shutdown(Duration::from_secs(1)).await.unwrap();
}

#[tokio::test]
async fn dropping_a_request_tells_the_server_which_stops_work() {
    // At end of input the server gives running requests a minute before cancelling them,
    // and we give it 30 s to exit before SIGTERM: it exits by itself only if the request
    // was cancelled already.
    let command = ServerCommand::new(ECHO)
        .env("MCP_STDIO_ECHO_EOF_GRACE_MS", "60000")
        .stdin_close_grace(Duration::from_secs(30));
    let (peer, server) = connect(&command, NoHandler, client_config()).unwrap();
    let timed_out = peer
        .request(
            "sleep",
            Some(&json!({"ms": 60_000})),
            RequestOptions::default().timeout(Duration::from_millis(200)),
        )
        .await
        .unwrap_err();
    assert!(timed_out.is_timeout());
    // The server received notifications/cancelled and its handler stopped: it exits when
    // stdin closes instead of sitting out its grace on a 60-second sleep (and being sent
    // SIGTERM when ours ends first).
    let status = server.shutdown(Duration::from_secs(5)).await.unwrap();
    assert_eq!(status.code(), Some(0), "{status}");
}

#[tokio::test]
async fn a_server_writing_after_stdin_closes_is_read_until_it_exits() {
    // The server writes 1 MiB, more than a pipe holds, once its stdin closes and then
    // exits 0, or 4 if a write fails. Graces far longer than it needs: an exit status of
    // 0 shows stdout was still read (and discarded) after the connection stopped, so the
    // server neither blocked on a full pipe nor got EPIPE.
    let command = ServerCommand::new(FIXTURE)
        .arg("write-after-close")
        .stderr(StderrMode::Discard)
        .stdin_close_grace(Duration::from_secs(30))
        .term_grace(Duration::from_secs(30));
    let (peer, server) = connect(&command, NoHandler, client_config()).unwrap();
    let back = peer
        .request("echo", Some(&json!({"a": 1})), RequestOptions::default())
        .await
        .unwrap();
    assert_eq!(value(&back)["echo"], json!({"a": 1}));
    let started = Instant::now();
    let status = tokio::time::timeout(
        Duration::from_secs(20),
        server.shutdown(Duration::from_secs(1)),
    )
    .await
    .expect("shutdown hung")
    .unwrap();
    assert_eq!(status.code(), Some(0), "{status}");
    assert!(started.elapsed() < Duration::from_secs(20));
}

#[cfg(unix)]
#[tokio::test]
async fn a_server_writing_for_ever_after_stdin_closes_is_terminated() {
    use std::os::unix::process::ExitStatusExt;

    // `yes` ignores stdin and writes without end: the drain reads it, and the graces,
    // not end of file, bound the close.
    let command = ServerCommand::new("/usr/bin/env")
        .arg("yes")
        .inherit_var("PATH")
        .stderr(StderrMode::Discard)
        .stdin_close_grace(Duration::from_millis(200))
        .term_grace(Duration::from_millis(200));
    let (_peer, server) = connect(&command, NoHandler, client_config()).unwrap();
    let started = Instant::now();
    let status = tokio::time::timeout(
        Duration::from_secs(20),
        server.shutdown(Duration::from_secs(1)),
    )
    .await
    .expect("shutdown hung")
    .unwrap();
    // Killed by SIGTERM after the grace, not by SIGPIPE (13) as it would be if stdout
    // lost its reader when the connection stopped.
    assert_eq!(status.signal(), Some(15), "{status}");
    assert!(started.elapsed() >= Duration::from_millis(200));
}

/// The server side: a real engine-based server, driven over raw pipes, writes nothing but
/// protocol messages to stdout, answers hostile lines with errors, and exits at EOF.
#[tokio::test]
async fn a_server_writes_only_protocol_messages_to_stdout() {
    let mut child = tokio::process::Command::new(ECHO)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = [
        r#"{"jsonrpc":"2.0","id":1,"method":"log"}"#.to_owned(),
        "not json at all".to_owned(),
        "\r".to_owned(),
        r#"{"jsonrpc":"2.0","id":2,"method":"echo","params":{"crlf":true}}"#.to_owned() + "\r",
        format!(
            r#"{{"jsonrpc":"2.0","id":3,"method":"echo","params":{{"big":"{}"}}}}"#,
            "x".repeat(5 << 20)
        ),
        r#"{"jsonrpc":"2.0","id":4,"method":"echo","params":{"after":"the big one"}}"#.to_owned(),
    ];
    let writer = tokio::spawn(async move {
        for line in input {
            stdin.write_all(line.as_bytes()).await.unwrap();
            stdin.write_all(b"\n").await.unwrap();
        }
        stdin.shutdown().await.unwrap();
        drop(stdin);
    });
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    let mut messages = Vec::new();
    while let Some(line) = lines.next_line().await.unwrap() {
        let message: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"));
        assert_eq!(message["jsonrpc"], "2.0", "{line}");
        messages.push(message);
    }
    writer.await.unwrap();
    let status = child.wait().await.unwrap();
    assert!(status.success(), "exits cleanly at EOF: {status}");

    let find = |pred: &dyn Fn(&Value) -> bool| messages.iter().find(|m| pred(m)).cloned();
    assert!(find(&|m| m["method"] == "notifications/message").is_some());
    assert_eq!(find(&|m| m["id"] == 1).unwrap()["result"], json!({}));
    assert_eq!(
        find(&|m| m["error"]["code"] == -32700).unwrap()["id"],
        Value::Null
    );
    assert_eq!(
        find(&|m| m["id"] == 2).unwrap()["result"],
        json!({"crlf": true})
    );
    let too_long = find(&|m| m["error"]["code"] == -32600).expect("the 5 MiB line is refused");
    assert_eq!(too_long["id"], Value::Null);
    assert!(
        find(&|m| m["id"] == 3).is_none(),
        "the over-long line was discarded, not answered"
    );
    assert_eq!(
        find(&|m| m["id"] == 4).unwrap()["result"],
        json!({"after": "the big one"})
    );
    assert_eq!(messages.len(), 6, "{messages:#?}");
}
