//! Child processes of the tests (peer servers, example binaries, Redis): killed and reaped
//! when the test ends, however it ends.

use std::collections::BTreeMap;
use std::io::BufRead as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, PoisonError};
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

/// A loopback port free a moment ago (for a child that binds its own).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts `command`, a server that prints its endpoint URL as the first line of its
/// stdout (`mcp serve-example --http`, `mcp gateway --http`), with stdin closed: the
/// process and that URL.
pub fn spawn_url(command: &mut Command) -> (Killed, String) {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {command:?}: {e}"));
    let stdout = child.stdout.take().unwrap();
    let child = Killed(child);
    let mut url = String::new();
    std::io::BufReader::new(stdout).read_line(&mut url).unwrap();
    assert!(url.starts_with("http://"), "{command:?} printed {url:?}");
    (child, url.trim().to_owned())
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

/// Runs the setup script `script` with bash once per test binary (the tests run in
/// parallel, and the others wait for the one that runs it), and panics, with its output,
/// if it failed: at every call, so that each test that needs it fails.
pub fn setup_once(script: &Path) {
    static RUNS: Mutex<BTreeMap<PathBuf, Result<(), String>>> = Mutex::new(BTreeMap::new());
    let mut runs = RUNS.lock().unwrap_or_else(PoisonError::into_inner);
    let result = runs.entry(script.to_owned()).or_insert_with(|| {
        let output = Command::new("bash")
            .arg(script)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("cannot run {}: {e}", script.display()))?;
        if output.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{} failed ({}):\n--- stdout ---\n{}\n--- stderr ---\n{}",
                script.display(),
                output.status,
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr),
            ))
        }
    });
    if let Err(report) = result {
        panic!("{report}");
    }
}
