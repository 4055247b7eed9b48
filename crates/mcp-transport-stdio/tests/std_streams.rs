//! How a stdio server drives its own standard streams: non-blocking pipes on the reactor
//! when they are pipes, tokio's blocking streams otherwise, and a blocking stdout when
//! stderr is the same pipe (`2>&1`), so that a logger never sees `EAGAIN`.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use serde_json::Value;

const ECHO: &str = env!("CARGO_BIN_EXE_mcp-stdio-echo");
const REQUEST: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"streams\"}\n";

/// Sends `streams` to a server started by `command` and reads the answer from `replies`.
fn streams(mut command: Command, replies: impl std::io::Read) -> (bool, bool) {
    let mut child = command.spawn().expect("the echo server starts");
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(REQUEST).unwrap();
    }
    let mut line = String::new();
    BufReader::new(replies).read_line(&mut line).unwrap();
    let _ = child.kill();
    let _ = child.wait();
    let reply: Value = serde_json::from_str(&line).expect("one JSON reply");
    let result = &reply["result"];
    (
        result["stdinPipe"].as_bool().expect("stdinPipe"),
        result["stdoutPipe"].as_bool().expect("stdoutPipe"),
    )
}

#[test]
fn pipes_are_driven_on_the_reactor() {
    let mut command = Command::new(ECHO);
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().unwrap();
    child.stdin.take().unwrap().write_all(REQUEST).unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let _ = child.wait();
    let reply: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(reply["result"]["stdinPipe"], true, "{reply}");
    assert_eq!(reply["result"]["stdoutPipe"], true, "{reply}");
}

#[test]
fn stdout_stays_blocking_when_stderr_is_the_same_pipe() {
    let (reader, writer) = std::io::pipe().unwrap();
    let mut command = Command::new(ECHO);
    command
        .stdin(Stdio::piped())
        .stdout(writer.try_clone().unwrap())
        .stderr(writer);
    let (stdin_pipe, stdout_pipe) = streams(command, reader);
    assert!(stdin_pipe);
    assert!(!stdout_pipe, "stdout shares its pipe with stderr");
}

#[test]
fn a_file_on_stdin_uses_the_blocking_stream() {
    let dir = std::env::temp_dir().join(format!("mcp-std-streams-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("requests.jsonl");
    std::fs::write(&path, REQUEST).unwrap();
    let (reader, writer) = std::io::pipe().unwrap();
    let mut command = Command::new(ECHO);
    command
        .stdin(std::fs::File::open(&path).unwrap())
        .stdout(writer)
        .stderr(Stdio::null());
    let (stdin_pipe, stdout_pipe) = streams(command, reader);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(!stdin_pipe, "a regular file is not a pipe");
    assert!(stdout_pipe);
}
