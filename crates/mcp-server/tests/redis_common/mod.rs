//! What the tests against a real Redis share: a `redis-server` (Debian's package) of their
//! own on a free loopback port, stopped at the end, which a test may kill, start again on
//! the same port, or freeze. Without the binary the tests say so and pass, except in CI,
//! which installs it (`.ci/run`) and where a missing one fails them. Waiting here is real
//! time (a real server answers over a socket), always bounded and polled, never a fixed
//! sleep that hopes.

#![allow(dead_code, unreachable_pub)]

use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A `redis-server` child on a free loopback port, killed when dropped.
pub struct Redis {
    child: Child,
    pub url: String,
    pub port: u16,
}

impl Drop for Redis {
    fn drop(&mut self) {
        // A frozen server is woken first, so that it dies rather than lingers stopped.
        self.signal("CONT");
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn spawn(port: u16) -> Child {
    Command::new("redis-server")
        .args([
            "--port",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("redis-server starts")
}

/// Waits until something listens on `port` (5 s at most).
async fn listening(port: u16) {
    for _ in 0..200 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("redis-server did not listen on port {port}");
}

/// Starts a Redis, or `None` (with a message) when `redis-server` is not installed and the
/// run is not CI's. In CI (`CI` set, as `.ci/run` runs) a missing Redis fails the test:
/// a skipped Redis test there would be a green run with no Redis coverage.
pub async fn redis() -> Option<Redis> {
    let probe = Command::new("redis-server")
        .arg("--version")
        .stdout(Stdio::null())
        .status();
    if probe.is_err() {
        assert!(
            std::env::var_os("CI").is_none_or(|ci| ci.is_empty()),
            "`redis-server` is not installed, and CI must test the Redis store and bus \
             (Debian: apt-get install redis-server)"
        );
        eprintln!(
            "SKIPPED: `redis-server` is not installed (Debian: apt-get install redis-server)"
        );
        return None;
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let redis = Redis {
        child: spawn(port),
        url: format!("redis://127.0.0.1:{port}/"),
        port,
    };
    listening(port).await;
    Some(redis)
}

impl Redis {
    /// Kills the server: its clients' connections close.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Starts the server again on the same port (empty: nothing was saved).
    pub async fn restart(&mut self) {
        self.kill();
        self.child = spawn(self.port);
        listening(self.port).await;
    }

    /// Sends the server `SIGSTOP` (`"STOP"`) or `SIGCONT` (`"CONT"`): stopped, its
    /// connections stay open and answer nothing, as across a network partition.
    pub fn signal(&self, signal: &str) {
        let _ = Command::new("kill")
            .args([&format!("-{signal}"), &self.child.id().to_string()])
            .status();
    }
}
