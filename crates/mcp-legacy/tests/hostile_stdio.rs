//! Hostile input on stdio: the dual-era server behind the real line framing
//! (`mcp_transport_stdio::LineReader` and `LineWriter` over an in-process pipe), fed the
//! table of `hostile_common` in the modern era and in a 2025-11-25 session, on one
//! connection each. After every case the same pipe must still answer a valid request, and
//! nothing may have panicked. Then what only stdio has: line length at and past the limit,
//! line endings, and a last line without its newline.
//!
//! The rules: <https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/stdio> (framing) and
//! <https://modelcontextprotocol.io/specification/2026-07-28/basic> (JSON-RPC error codes).

mod hostile_common;

use std::time::Duration;

use hostile_common::{
    Case, Era, Expect, LEGACY, cases, check_probe, count_panics, in_both_eras, panics, probe,
    server, subset,
};
use mcp_jsonrpc::PeerConfig;
use mcp_legacy::server::DualEra;
use mcp_test_support::JsonLines;
use mcp_transport_stdio::{LineReader, LineWriter};
use serde_json::{Value, json};
use tokio::io::split;

/// The line limit of the server under test: small enough to cross cheaply, large enough
/// for every case of the table (the deepest is 200 kB).
const MAX_LINE: usize = 256 << 10;

/// The server under test behind the line framing, and the client's end of its pipe.
fn start() -> (JsonLines, mcp_jsonrpc::Connection) {
    let (client, server_end) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = split(server_end);
    let reader = LineReader::with_max_line(server_read, MAX_LINE);
    let writer = LineWriter::new(server_write);
    let (_peer, conn) = DualEra::new(server()).connect(reader, writer, PeerConfig::default());
    let (read, write) = split(client);
    let pipe = JsonLines::new(read, write, Duration::from_secs(10), "the server");
    (pipe, conn)
}

/// What a test does on the client's end of the pipe beyond writing and reading lines.
trait Pipe {
    async fn probe(&mut self, case: &str, era: Era, id: i64);
    async fn open(&mut self, era: Era);
}

impl Pipe for JsonLines {
    /// Sends the probe with `id` and checks that it is the very next thing answered, so
    /// that a case expected to be silent really was.
    async fn probe(&mut self, case: &str, era: Era, id: i64) {
        self.line(probe(era, id).to_string().as_bytes()).await;
        let reply = self.message().await;
        check_probe(case, id, &reply);
    }

    /// Opens the era: a modern request, or `initialize` and `notifications/initialized`.
    async fn open(&mut self, era: Era) {
        if era == Era::Legacy {
            let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": LEGACY, "capabilities": {},
                "clientInfo": {"name": "hostile", "version": "1"}}});
            self.line(init.to_string().as_bytes()).await;
            let reply = self.message().await;
            assert_eq!(reply["result"]["protocolVersion"], LEGACY, "{reply}");
            self.line(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
                .await;
        }
        self.probe("opening", era, 1).await;
    }
}

/// Sends one case on the pipe and checks its answer, then the probe.
async fn check(pipe: &mut JsonLines, era: Era, case: &Case, probe_id: i64) {
    let name = case.name;
    pipe.line(&case.body).await;
    match &case.expect {
        Expect::Error { id, code, .. } => {
            let reply = pipe.message().await;
            assert_eq!(&reply["id"], id, "{era:?} {name}: the id of {reply}");
            assert_eq!(
                reply["error"]["code"],
                json!(code),
                "{era:?} {name}: {reply}"
            );
            assert!(reply.get("result").is_none(), "{era:?} {name}: {reply}");
        }
        Expect::Result { id, members } => {
            let reply = pipe.message().await;
            assert_eq!(&reply["id"], id, "{era:?} {name}: the id of {reply}");
            assert!(
                subset(members, &reply["result"]),
                "{era:?} {name}: {reply} lacks {members}"
            );
        }
        Expect::Silent { .. } => {}
    }
    pipe.probe(name, era, probe_id).await;
}

async fn run_table(era: Era) {
    count_panics();
    let (mut pipe, _conn) = start();
    pipe.open(era).await;
    for (n, case) in cases(era).iter().enumerate() {
        check(&mut pipe, era, case, 1000 + i64::try_from(n).unwrap()).await;
    }
    assert_eq!(panics(), 0, "{era:?}: nothing may panic, even caught");
}

in_both_eras!(run_table: the_table_in_the_modern_era, the_table_in_a_legacy_session);

/// A request whose line is exactly `len` bytes long.
fn line_of(era: Era, len: usize) -> Vec<u8> {
    let mut request = hostile_common::request(era, json!(77), "tools/list", json!({"pad": ""}));
    let bare = request.to_string().len();
    request["params"]["pad"] = json!("p".repeat(len - bare));
    let line = request.to_string().into_bytes();
    assert_eq!(line.len(), len);
    line
}

#[tokio::test]
async fn a_line_at_the_limit_is_read_and_one_past_it_is_refused() {
    for era in [Era::Modern, Era::Legacy] {
        let (mut pipe, _conn) = start();
        pipe.open(era).await;
        pipe.line(&line_of(era, MAX_LINE)).await;
        let reply = pipe.message().await;
        assert_eq!(reply["id"], 77, "{era:?}: {reply}");
        assert!(reply["result"]["tools"].is_array(), "{era:?}: {reply}");

        // One byte more: one error with a null id (the line was never parsed), and the
        // line is skipped, not buffered.
        pipe.line(&line_of(era, MAX_LINE + 1)).await;
        let reply = pipe.message().await;
        assert_eq!(reply["id"], Value::Null, "{era:?}: {reply}");
        assert_eq!(reply["error"]["code"], -32600, "{era:?}: {reply}");
        pipe.probe("past the line limit", era, 2).await;

        // Far past it, in pieces: still one error, and the pipe goes on.
        pipe.write(&vec![b'x'; MAX_LINE * 3]).await;
        pipe.line(b"").await;
        let reply = pipe.message().await;
        assert_eq!(reply["error"]["code"], -32600, "{era:?}: {reply}");
        pipe.probe("three times the line limit", era, 3).await;
    }
}

#[tokio::test]
async fn line_endings_and_blank_lines() {
    let (mut pipe, _conn) = start();
    pipe.open(Era::Modern).await;
    // Blank and whitespace-only lines are skipped without an answer.
    pipe.write(b"\n\r\n \t \n").await;
    pipe.probe("blank lines", Era::Modern, 2).await;
    // CRLF is tolerated.
    pipe.write(format!("{}\r\n", probe(Era::Modern, 3)).as_bytes())
        .await;
    let reply = pipe.message().await;
    check_probe("crlf", 3, &reply);
    // A line holding two messages is not two messages: it is not JSON.
    let two = format!("{}{}", probe(Era::Modern, 4), probe(Era::Modern, 5));
    pipe.line(two.as_bytes()).await;
    let reply = pipe.message().await;
    assert_eq!(reply["error"]["code"], -32700, "{reply}");
    pipe.probe("two messages on a line", Era::Modern, 6).await;
    // An embedded carriage return in the middle of a message is only whitespace to JSON.
    let split = probe(Era::Modern, 7).to_string().replacen(',', ",\r", 1);
    pipe.line(split.as_bytes()).await;
    check_probe("a carriage return inside", 7, &pipe.message().await);
}

#[tokio::test]
async fn a_last_line_without_its_newline_is_answered_then_the_connection_ends() {
    for era in [Era::Modern, Era::Legacy] {
        let (mut pipe, _conn) = start();
        pipe.open(era).await;
        pipe.write(probe(era, 9).to_string().as_bytes()).await;
        pipe.close().await;
        check_probe("partial line at EOF", 9, &pipe.message().await);
        assert_eq!(pipe.next().await, None, "{era:?}: then end of stream");
    }
}

#[tokio::test]
async fn a_truncated_last_line_is_one_parse_error_then_the_connection_ends() {
    let (mut pipe, _conn) = start();
    pipe.open(Era::Modern).await;
    let whole = probe(Era::Modern, 9).to_string();
    pipe.write(&whole.as_bytes()[..whole.len() / 2]).await;
    pipe.close().await;
    let reply = pipe.message().await;
    assert_eq!(reply["error"]["code"], -32700, "{reply}");
    assert_eq!(pipe.next().await, None);
}

#[tokio::test]
async fn a_duplicate_id_in_flight_is_refused_and_the_first_request_still_answered() {
    count_panics();
    let (mut pipe, _conn) = start();
    pipe.open(Era::Modern).await;
    // A listen stream stays in flight: its id is taken until it ends.
    let listen = hostile_common::request(
        Era::Modern,
        json!("dup"),
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    );
    pipe.line(listen.to_string().as_bytes()).await;
    let ack = pipe.message().await;
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    let again = hostile_common::request(Era::Modern, json!("dup"), "tools/list", json!({}));
    pipe.line(again.to_string().as_bytes()).await;
    let reply = pipe.message().await;
    assert_eq!(reply["id"], "dup", "{reply}");
    assert_eq!(reply["error"]["code"], -32600, "{reply}");
    // Cancelling the stream frees the id (stdio cancels with a notification).
    pipe.line(
        br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"dup"}}"#,
    )
    .await;
    pipe.probe("after the duplicate", Era::Modern, 2).await;
    pipe.line(again.to_string().as_bytes()).await;
    let reply = pipe.message().await;
    assert_eq!(reply["id"], "dup", "{reply}");
    assert!(
        reply["result"]["tools"].is_array(),
        "the id is free again: {reply}"
    );
    assert_eq!(panics(), 0);
}
