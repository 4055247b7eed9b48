//! What the soak reads of a server process from `/proc`, and the server processes
//! themselves: `mcp-bench-server --soak-tools`, over HTTP or raw stdio pipes.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt as _, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// One look at a process: resident and peak resident memory, open descriptors.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Sample {
    pub(crate) rss_kib: u64,
    pub(crate) peak_kib: u64,
    pub(crate) fds: usize,
}

impl Sample {
    pub(crate) fn of(pid: u32) -> Result<Sample, String> {
        let path = format!("/proc/{pid}/status");
        let status =
            std::fs::read_to_string(&path).map_err(|e| format!("cannot read {path}: {e}"))?;
        let kib = |key: &str| -> Result<u64, String> {
            status
                .lines()
                .find_map(|l| l.strip_prefix(key))
                .and_then(|v| v.trim().strip_suffix("kB"))
                .and_then(|v| v.trim().parse().ok())
                .ok_or_else(|| format!("{path}: no {key} in kB"))
        };
        let fds = std::fs::read_dir(format!("/proc/{pid}/fd"))
            .map_err(|e| format!("cannot list /proc/{pid}/fd: {e}"))?
            .count();
        Ok(Sample {
            rss_kib: kib("VmRSS:")?,
            peak_kib: kib("VmHWM:")?,
            fds,
        })
    }
}

/// The soft limit on open files of this process (`/proc/self/limits`).
pub(crate) fn open_files_limit() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

/// A server process, killed when dropped.
pub(crate) struct Server {
    _child: Child,
    pub(crate) pid: u32,
    /// The endpoint URL (HTTP servers).
    pub(crate) url: String,
}

/// Starts `program --soak-tools ARGS…` with `stdin`, its stdout piped: the child, its
/// pid and its stdout.
fn spawn(program: &str, args: &[&str], stdin: Stdio) -> Result<(Child, u32, ChildStdout), String> {
    let mut child = Command::new(program)
        .arg("--soak-tools")
        .args(args)
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot start {program}: {e}"))?;
    let pid = child.id().ok_or("the server exited at once")?;
    let stdout = child.stdout.take().ok_or("no stdout pipe")?;
    Ok((child, pid, stdout))
}

impl Server {
    /// `mcp-bench-server --soak-tools --http 127.0.0.1:0 ARGS…`; its URL is the first
    /// line it prints.
    pub(crate) async fn http(program: &str, args: &[&str]) -> Result<Server, String> {
        let args = [&["--http", "127.0.0.1:0"][..], args].concat();
        let (child, pid, stdout) = spawn(program, &args, Stdio::null())?;
        let mut lines = BufReader::new(stdout).lines();
        let first = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
            .await
            .map_err(|_| "the server printed no URL within 30 s".to_owned())?
            .map_err(|e| format!("cannot read the server's stdout: {e}"))?
            .ok_or("the server exited before printing its URL")?;
        let url = first
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .ok_or_else(|| format!("the server printed {first:?}, not a URL"))?
            .to_owned();
        // Keep draining so that the server never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Ok(Server {
            _child: child,
            pid,
            url,
        })
    }

    /// `mcp-bench-server --soak-tools` on raw pipes.
    pub(crate) fn stdio(program: &str) -> Result<(Server, ChildStdin, ChildStdout), String> {
        let (mut child, pid, stdout) = spawn(program, &[], Stdio::piped())?;
        let stdin = child.stdin.take().ok_or("no stdin pipe")?;
        Ok((
            Server {
                _child: child,
                pid,
                url: String::new(),
            },
            stdin,
            stdout,
        ))
    }

    pub(crate) fn sample(&self) -> Result<Sample, String> {
        Sample::of(self.pid)
    }
}
