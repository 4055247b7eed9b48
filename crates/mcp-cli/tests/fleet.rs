//! `mcp serve-example --http ADDR --redis URL` as instances of a fleet: a listener on one
//! instance hears a change made through another, through a real `redis-server`.

#[path = "../../mcp-server/tests/redis_common/mod.rs"]
mod redis_common;

use std::io::{BufRead as _, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use mcp_test_support::Killed;

const MCP: &str = env!("CARGO_BIN_EXE_mcp");

/// An example server instance sharing the Redis at `redis`: its endpoint URL.
fn instance(redis: &str) -> (Killed, String) {
    let mut child = Command::new(MCP)
        .args(["serve-example", "--http", "127.0.0.1:0", "--redis", redis])
        .stdout(Stdio::piped())
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let mut url = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut url)
        .unwrap();
    (Killed(child), url.trim().to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listener_on_one_instance_hears_a_change_made_through_another() {
    let Some(redis) = redis_common::redis().await else {
        return;
    };
    let (_a, a) = instance(&redis.url);
    let (_b, b) = instance(&redis.url);
    assert!(
        a.starts_with("http://") && b.starts_with("http://") && a != b,
        "{a} {b}"
    );

    // Listening on A, with the 2026-07-28 protocol and, separately, a 2025-11-25 session.
    let listen = |protocol: &str| {
        let mut child = Command::new(MCP)
            .args([
                "listen",
                "example://counter",
                "--count",
                "1",
                "--json",
                "--protocol",
                protocol,
                "--server",
                &a,
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        (Killed(child), rx)
    };
    let listeners = [listen("modern"), listen("legacy")];

    // Changes through B, until each listener has heard one (it prints nothing before, so
    // the first changes may come before it is subscribed).
    let mut heard = vec![None; listeners.len()];
    for _ in 0..100 {
        let out = Command::new(MCP)
            .args(["call", "increment", "--server", &b])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        for ((_, rx), heard) in listeners.iter().zip(&mut heard) {
            if heard.is_none() {
                *heard = rx.recv_timeout(Duration::from_millis(100)).ok();
            }
        }
        if heard.iter().all(Option::is_some) {
            break;
        }
    }
    for event in heard {
        let event = event.expect("a listener on A heard no change made through B");
        assert!(
            event.contains("resources/updated") && event.contains("example://counter"),
            "{event}"
        );
    }
    drop(redis);
}
