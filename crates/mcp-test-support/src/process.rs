//! Child processes of the tests (peer servers, example binaries, Redis): killed and reaped
//! when the test ends, however it ends.

use std::io::BufRead as _;
use std::ops::{Deref, DerefMut};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A child process killed and reaped on drop.
#[derive(Debug)]
pub struct Killed(pub Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Deref for Killed {
    type Target = Child;

    fn deref(&self) -> &Child {
        &self.0
    }
}

impl DerefMut for Killed {
    fn deref_mut(&mut self) -> &mut Child {
        &mut self.0
    }
}

/// A loopback port free a moment ago (for a child that binds its own).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts `command` (stdin and stdout to nothing, stderr read here) and waits up to `wait`
/// for a line of its stderr that `ready` accepts: a peer that says it listens. `what`
/// names it in a failure.
pub fn spawn_ready(
    command: &mut Command,
    ready: impl Fn(&str) -> bool + Send + 'static,
    wait: Duration,
    what: &str,
) -> Killed {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {what}: {e}"));
    let stderr = child.stderr.take().unwrap();
    let child = Killed(child);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            if ready(&line) {
                let _ = tx.send(());
            }
        }
    });
    rx.recv_timeout(wait)
        .unwrap_or_else(|_| panic!("{what} did not start listening"));
    child
}
