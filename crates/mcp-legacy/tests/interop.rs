//! Interop: the official TypeScript SDK v1 client (`@modelcontextprotocol/sdk` 1.x, which
//! speaks only the initialize-era revisions) and the Python SDK client (`mcp` 2.x) in its
//! handshake mode, against this crate's dual-era server over stdio
//! (`mcp-dual-era-demo`), including a tool whose `input_required` rounds reach the client
//! as real `elicitation/create` and `sampling/createMessage` requests. The pinned peers
//! live in `interop/`; `interop/setup.sh` installs them (once per test binary), and a
//! setup failure fails the tests.

#![cfg(feature = "stdio")]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;

use serde_json::{Value, json};

const SERVER: &str = env!("CARGO_BIN_EXE_mcp-dual-era-demo");

fn interop_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../interop")
}

fn run(program: &str, args: &[&Path]) -> String {
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

/// Runs `interop/setup.sh` once per test binary; the tests run in parallel and must not
/// install at the same time.
fn setup() {
    static DONE: Mutex<bool> = Mutex::new(false);
    let mut done = DONE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if !*done {
        run("bash", &[&interop_dir().join("setup.sh")]);
        *done = true;
    }
}

#[test]
fn typescript_sdk_v1_client_over_stdio() {
    setup();
    let dir = interop_dir();
    let stdout = run("node", &[&dir.join("ts-v1-client.mjs"), Path::new(SERVER)]);
    let out: Value =
        serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert!(
        out.get("error").is_none(),
        "the client failed: {}",
        out["error"]
    );

    // The handshake: the SDK's newest revision, the server's identity and capabilities.
    assert_eq!(out["protocolVersion"], "2025-11-25");
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
    // requests, answered by the SDK's handlers, and the tool finished with both answers.
    assert_eq!(
        out["asked"],
        json!(["What is your name?", "A haiku for Ada"])
    );
    assert_eq!(
        out["interview"],
        json!({"content": [{"type": "text", "text": "Ada: Quiet numbers hum"}]})
    );
    // `logging/setLevel` made the tool's log reach the session.
    assert_eq!(out["logs"], json!(["echoing"]));
}

#[test]
fn python_sdk_client_in_handshake_mode_over_stdio() {
    setup();
    let dir = interop_dir();
    let python = dir.join(".venv/bin/python");
    let stdout = run(
        python.to_str().unwrap(),
        &[&dir.join("py-legacy-client.py"), Path::new(SERVER)],
    );
    let out: Value =
        serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"));

    assert_eq!(out["protocolVersion"], "2025-11-25");
    assert_eq!(
        out["serverInfo"],
        json!({"name": "dual-era-demo", "version": "1.0.0"})
    );
    assert_eq!(out["tools"], json!(["echo", "fails", "interview"]));
    assert_eq!(out["echo"]["content"][0]["text"], "hi");
    assert_eq!(out["fails"]["isError"], true);
    assert_eq!(
        out["interview"]["content"][0]["text"],
        "Grace: Ships in harbour"
    );
    assert_eq!(
        out["asked"],
        json!(["What is your name?", "A haiku for Grace"])
    );
    assert_eq!(out["read"]["contents"][0]["text"], "Hello, world");
    assert_eq!(out["prompt"]["messages"][0]["content"]["text"], "Hello Ada");
    assert_eq!(out["logs"], json!(["echoing"]));
}
