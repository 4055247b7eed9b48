//! Interop: the official TypeScript SDK v1 client (`@modelcontextprotocol/sdk` 1.x, which
//! speaks only the initialize-era revisions) and the Python SDK client (`mcp` 2.x) in its
//! handshake mode, against this crate's dual-era server (`mcp-dual-era-demo`) over stdio
//! and Streamable HTTP, pinned to 2025-11-25, 2025-06-18 and 2025-03-26 (the server offers
//! only the pinned revision, so the client negotiates exactly it), including a tool whose
//! `input_required` rounds reach the client as real `elicitation/create` and
//! `sampling/createMessage` requests (2025-06-18 on; a 2025-03-26 session has no
//! elicitation and gets -32021), and over the 2024-11-05 HTTP+SSE transport. The
//! TypeScript SDK v2 client (`@modelcontextprotocol/client`) runs in its default legacy
//! mode and in `auto` mode, where its `server/discover` probe finds the modern era. The pinned peers
//! live in `interop/`; `interop/setup.sh` installs them (once per test binary), and a
//! setup failure fails the tests.

#![cfg(all(feature = "stdio", feature = "http", feature = "http-sse"))]

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use mcp_test_support::{Killed, setup_once};
use serde_json::{Value, json};

const SERVER: &str = env!("CARGO_BIN_EXE_mcp-dual-era-demo");

fn interop_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../interop")
}

fn run(program: &str, args: &[&str]) -> String {
    let output = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program}: {e}"));
    assert!(
        output.status.success(),
        "{program} {args:?} failed ({}):\n--- stdout ---\n{}\n--- stderr ---\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    String::from_utf8(output.stdout).unwrap()
}

/// Runs a peer client and reads the JSON report it prints; it must report no error.
fn client_report(program: &str, args: &[&str]) -> Value {
    let stdout = run(program, args);
    let out: Value =
        serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert!(
        out.get("error").is_none(),
        "the client failed: {}",
        out["error"]
    );
    out
}

/// The demo server's identity (under `identity`), its tools, and their plain calls.
fn check_demo(out: &Value, identity: &str) {
    assert_eq!(
        out[identity],
        json!({"name": "dual-era-demo", "version": "1.0.0"})
    );
    assert_eq!(out["tools"], json!(["echo", "fails", "interview"]));
    assert_eq!(out["echo"]["content"][0]["text"], "hi");
    assert_eq!(out["fails"]["isError"], true);
}

/// The interview tool's outcome in a report: with elicitation (2025-06-18 on) the tool
/// asked for the name `who` chose and a haiku, and finished with `answer`; without it the
/// tool could not ask, and said why.
fn check_interview(out: &Value, version: &str, who: &str, answer: &str) {
    if has_elicitation(version) {
        assert_eq!(
            out["asked"],
            json!(["What is your name?", format!("A haiku for {who}")])
        );
        assert_eq!(out["interview"]["content"][0]["text"], answer);
    } else {
        assert_eq!(
            out["interview"]["error"]["code"], -32021,
            "{}",
            out["interview"]
        );
        assert_eq!(out["asked"], json!([]));
    }
}

/// Runs `interop/setup.sh` once per test binary and panics, with its output, if it fails.
fn setup() {
    setup_once(&interop_dir().join("setup.sh"));
}

/// How a client reaches the server.
#[derive(Clone, Copy, PartialEq)]
enum Via {
    Stdio,
    /// Streamable HTTP.
    Http,
    /// The 2024-11-05 HTTP+SSE transport.
    Sse,
}

/// Where a client reaches the server: a stdio command, or a running HTTP server (its
/// Streamable HTTP endpoint or its HTTP+SSE stream).
enum Target {
    Stdio(Vec<String>),
    Http(HttpServer),
    Sse(HttpServer),
}

/// `mcp-dual-era-demo --http`, killed when dropped.
struct HttpServer {
    _child: Killed,
    url: String,
}

fn target(via: Via, version: &str) -> Target {
    if via == Via::Stdio {
        return Target::Stdio(vec![
            SERVER.to_owned(),
            "--versions".to_owned(),
            version.to_owned(),
        ]);
    }
    let mut child = Command::new(SERVER)
        .args(["--http", "127.0.0.1:0", "--versions", version])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the demo server starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line.trim().to_owned();
    if via == Via::Sse {
        let url = url.replace("/mcp", "/sse");
        return Target::Sse(HttpServer {
            _child: Killed(child),
            url,
        });
    }
    Target::Http(HttpServer {
        _child: Killed(child),
        url,
    })
}

impl Target {
    fn args(&self) -> Vec<&str> {
        match self {
            Target::Stdio(command) => command.iter().map(String::as_str).collect(),
            Target::Http(server) => vec!["--url", &server.url],
            Target::Sse(server) => vec!["--sse", &server.url],
        }
    }
}

/// Whether the revision has `elicitation/create` (2025-06-18 on).
fn has_elicitation(version: &str) -> bool {
    version >= "2025-06-18"
}

fn typescript_v1(via: Via, version: &str) {
    setup();
    let target = target(via, version);
    let script = interop_dir().join("ts-v1-client.mjs");
    let mut args = vec![script.to_str().unwrap()];
    args.extend(target.args());
    let out = client_report("node", &args);

    // The handshake: the pinned revision, the server's identity and capabilities.
    assert_eq!(out["protocolVersion"], version);
    assert_eq!(
        out["serverVersion"],
        json!({"name": "dual-era-demo", "version": "1.0.0"})
    );
    assert_eq!(out["instructions"], "A demo server for both MCP eras.");
    for capability in ["tools", "resources", "prompts", "logging"] {
        assert!(
            out["capabilities"][capability].is_object(),
            "{}",
            out["capabilities"]
        );
    }
    if via == Via::Http {
        // A session id: 128 random bits in hex; the client ended it with DELETE.
        let session = out["sessionId"].as_str().unwrap();
        assert_eq!(session.len(), 32, "{session}");
    }

    // The same handlers, answered in the legacy shape.
    assert_eq!(out["tools"], json!(["echo", "fails", "interview"]));
    assert_eq!(
        out["echo"],
        json!({"content": [{"type": "text", "text": "hi"}]})
    );
    assert_eq!(out["fails"]["isError"], true);
    assert_eq!(out["resources"], json!(["demo://hello"]));
    assert_eq!(out["read"]["contents"][0]["text"], "Hello, world");
    assert_eq!(out["prompts"], json!(["greet"]));
    assert_eq!(out["prompt"]["messages"][0]["content"]["text"], "Hello Ada");
    assert_eq!(out["ping"], json!({}));
    // `input_required` became real `elicitation/create` then `sampling/createMessage`
    // requests, answered by the SDK's handlers, and the tool finished with both.
    check_interview(&out, version, "Ada", "Ada: Quiet numbers hum");
    if has_elicitation(version) {
        assert_eq!(
            out["interview"],
            json!({"content": [{"type": "text", "text": "Ada: Quiet numbers hum"}]})
        );
    }
    // `logging/setLevel` made the tool's log reach the session.
    assert_eq!(out["logs"], json!(["echoing"]));
}

fn python(via: Via, version: &str) {
    setup();
    let target = target(via, version);
    let dir = interop_dir();
    let python = dir.join(".venv/bin/python");
    let script = dir.join("py-legacy-client.py");
    let mut args = vec![script.to_str().unwrap()];
    args.extend(target.args());
    let out = client_report(python.to_str().unwrap(), &args);

    assert_eq!(out["protocolVersion"], version);
    check_demo(&out, "serverInfo");
    check_interview(&out, version, "Grace", "Grace: Ships in harbour");
    assert_eq!(out["read"]["contents"][0]["text"], "Hello, world");
    assert_eq!(out["prompt"]["messages"][0]["content"]["text"], "Hello Ada");
    assert_eq!(out["logs"], json!(["echoing"]));
}

/// One test a row: `name: client(arguments);`.
macro_rules! interop_tests {
    ($($name:ident: $client:ident($($arg:expr),*);)*) => {
        $(
            #[test]
            fn $name() {
                $client($($arg),*);
            }
        )*
    };
}

#[rustfmt::skip]
interop_tests! {
    typescript_sdk_v1_client_over_stdio: typescript_v1(Via::Stdio, "2025-11-25");
    typescript_sdk_v1_client_pinned_to_2025_06_18_over_stdio: typescript_v1(Via::Stdio, "2025-06-18");
    typescript_sdk_v1_client_over_http: typescript_v1(Via::Http, "2025-11-25");
    typescript_sdk_v1_client_pinned_to_2025_06_18_over_http: typescript_v1(Via::Http, "2025-06-18");
    typescript_sdk_v1_client_pinned_to_2025_03_26_over_http: typescript_v1(Via::Http, "2025-03-26");
    python_sdk_client_in_handshake_mode_over_stdio: python(Via::Stdio, "2025-11-25");
    python_sdk_client_pinned_to_2025_03_26_over_stdio: python(Via::Stdio, "2025-03-26");
    python_sdk_client_over_http: python(Via::Http, "2025-11-25");
    python_sdk_client_pinned_to_2025_06_18_over_http: python(Via::Http, "2025-06-18");
    python_sdk_client_pinned_to_2025_03_26_over_http: python(Via::Http, "2025-03-26");
    typescript_sdk_v1_client_over_the_2024_11_05_http_sse_transport: typescript_v1(Via::Sse, "2024-11-05");
    python_sdk_client_over_the_2024_11_05_http_sse_transport: python(Via::Sse, "2024-11-05");
    typescript_sdk_v2_client_in_legacy_mode_over_stdio: typescript_v2("legacy", Via::Stdio, "2025-11-25", "2025-11-25");
    typescript_sdk_v2_client_in_legacy_mode_pinned_to_2025_06_18_over_http: typescript_v2("legacy", Via::Http, "2025-06-18", "2025-06-18");
    typescript_sdk_v2_client_probing_finds_the_modern_era_over_stdio: typescript_v2("auto", Via::Stdio, "2025-11-25", "2026-07-28");
    typescript_sdk_v2_client_probing_finds_the_modern_era_over_http: typescript_v2("auto", Via::Http, "2025-11-25", "2026-07-28");
}

/// The TypeScript SDK v2 client in `mode` (`legacy`, its default handshake, or `auto`,
/// which probes with `server/discover` first) against the dual-era server offering
/// `version`: it must settle on `negotiated`, in the legacy era (a result without `_meta`)
/// or the modern one (a resource read with its `cacheScope`).
fn typescript_v2(mode: &str, via: Via, version: &str, negotiated: &str) {
    setup();
    let target = target(via, version);
    let script = interop_dir().join("ts-v2-client.mjs");
    let mut args = vec![script.to_str().unwrap(), mode];
    args.extend(target.args());
    let out = client_report("node", &args);
    assert_eq!(out["protocolVersion"], negotiated);
    if negotiated == "2026-07-28" {
        assert_eq!(out["era"], "modern");
        assert_eq!(
            out["read"]["cacheScope"], "public",
            "a modern result: {}",
            out["read"]
        );
    } else {
        assert_eq!(out["era"], "legacy");
        assert!(
            out["echo"].get("_meta").is_none(),
            "a legacy result: {}",
            out["echo"]
        );
    }
    check_demo(&out, "serverVersion");
    assert_eq!(out["read"]["contents"][0]["text"], "Hello, world");
    assert_eq!(out["prompt"]["messages"][0]["content"]["text"], "Hello Lin");
    // Either era, the same tool body asks the same two questions.
    check_interview(&out, version, "Lin", "Lin: Rivers keep time");
}
