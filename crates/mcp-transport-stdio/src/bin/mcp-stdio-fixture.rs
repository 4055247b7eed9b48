//! A small stdio MCP server, well or badly behaved on purpose, for the process
//! tests of `mcp-transport-stdio` (`tests/process.rs`).
//!
//! It uses only the standard library and `serde_json`, with no async runtime, so
//! what it does is easy to predict. Every mode first writes
//! `mcp-stdio-fixture <mode> started` to stderr. The first argument picks the mode:
//!
//! - `echo`: for each line on stdin that is a JSON object with an `id` and a
//!   string `method`, writes `{"jsonrpc":"2.0","id":<id>,"result":{"echo":<params or null>}}`
//!   on stdout and flushes it. Other lines (notifications, non-JSON) are ignored.
//!   Exits 0 at end of file on stdin.
//! - `crash-on <method>`: echoes until a request with that method arrives, then
//!   exits with status 3 without replying.
//! - `stderr-flood`: writes `flood start`, then a line of 1 MiB of `x` (one
//!   write with no newline, then the newline), then 49 writes of 1 MiB, each 1024
//!   lines of 1023 `y`, then `flood end`, all to stderr (about 50 MiB); then echoes.
//! - `pollute`: echoes, but writes the non-JSON line `debug: hello` on stdout
//!   before each reply.
//! - `ignore-stdin-close`: echoes, and at end of file on stdin sleeps for ever
//!   instead of exiting. To ignore SIGTERM as well without unsafe code, start it
//!   through `/bin/sh -c "trap '' TERM; exec <fixture> ignore-stdin-close"`: an
//!   ignored signal stays ignored across `exec`.
//! - `never-read`: never reads stdin; sleeps for ever.
//! - `grandchild`: starts `sleep 1000` (found through `PATH`, with stdin from
//!   the null device and stdout and stderr inherited, so it holds the stdout pipe
//!   open), writes `grandchild <pid>` to stderr, then echoes and exits 0 at end of
//!   file, leaving the grandchild running.
//! - `write-after-close`: echoes, and at end of file on stdin writes 1 MiB to
//!   stdout (1024 lines of 1023 `z`, more than a pipe holds) and exits 0; if a
//!   write fails (nobody reads stdout any more: `EPIPE`), it exits with status 4.
//!
//! An unknown mode writes a usage line to stderr and exits with status 2. Errors
//! writing to stdout or stderr (the client hung up) end the process quietly.

#![forbid(unsafe_code)]

use std::io::{self, BufRead, Write};
use std::process::{Command, ExitCode, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

/// What the echo loop does besides echoing.
#[derive(Clone, Copy, Default)]
struct Echo<'a> {
    /// Exit with status 3, without replying, on a request with this method.
    crash_on: Option<&'a str>,
    /// Write a non-JSON line on stdout before each reply.
    pollute: bool,
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mode = args.first().map_or("", String::as_str);
    let _ = writeln!(io::stderr(), "mcp-stdio-fixture {mode} started");
    let served = match (mode, args.get(1)) {
        ("echo", _) => echo(Echo::default()),
        ("crash-on", Some(method)) => echo(Echo {
            crash_on: Some(method),
            ..Echo::default()
        }),
        ("stderr-flood", _) => flood().and_then(|()| echo(Echo::default())),
        ("pollute", _) => echo(Echo {
            pollute: true,
            ..Echo::default()
        }),
        ("ignore-stdin-close", _) => {
            let _ = echo(Echo::default());
            sleep_forever()
        }
        ("never-read", _) => sleep_forever(),
        ("grandchild", _) => grandchild().and_then(|()| echo(Echo::default())),
        ("write-after-close", _) => {
            let _ = echo(Echo::default());
            if let Err(error) = write_after_close() {
                let _ = writeln!(io::stderr(), "writing stdout after stdin closed: {error}");
                return ExitCode::from(4);
            }
            return ExitCode::SUCCESS;
        }
        _ => {
            let _ = writeln!(
                io::stderr(),
                "usage: mcp-stdio-fixture echo | crash-on <method> | stderr-flood | pollute \
                 | ignore-stdin-close | never-read | grandchild | write-after-close"
            );
            return ExitCode::from(2);
        }
    };
    // A write error means the client closed a pipe: there is nobody to tell.
    drop(served);
    ExitCode::SUCCESS
}

/// Answers requests on stdin until end of file.
fn echo(echo: Echo<'_>) -> io::Result<()> {
    let mut stdin = io::stdin().lock();
    let mut stdout = io::stdout().lock();
    let mut line = Vec::new();
    loop {
        line.clear();
        if stdin.read_until(b'\n', &mut line)? == 0 {
            return Ok(());
        }
        let Ok(message) = serde_json::from_slice::<Value>(&line) else {
            continue;
        };
        let (Some(id), Some(method)) = (
            message.get("id"),
            message.get("method").and_then(Value::as_str),
        ) else {
            continue;
        };
        if echo.crash_on == Some(method) {
            std::process::exit(3);
        }
        if echo.pollute {
            stdout.write_all(b"debug: hello\n")?;
        }
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        let reply = json!({"jsonrpc": "2.0", "id": id, "result": {"echo": params}});
        serde_json::to_writer(&mut stdout, &reply)?;
        stdout.write_all(b"\n")?;
        stdout.flush()?;
    }
}

/// Writes about 50 MiB to stderr in 1 MiB writes, starting with a 1 MiB line.
fn flood() -> io::Result<()> {
    const MIB: usize = 1 << 20;
    let mut stderr = io::stderr().lock();
    stderr.write_all(b"flood start\n")?;
    stderr.write_all(&vec![b'x'; MIB])?;
    stderr.write_all(b"\n")?;
    let mut block = Vec::with_capacity(MIB);
    while block.len() < MIB {
        block.extend_from_slice(&[b'y'; 1023]);
        block.push(b'\n');
    }
    for _ in 0..49 {
        stderr.write_all(&block)?;
    }
    stderr.write_all(b"flood end\n")
}

/// Writes 1 MiB to stdout in lines, as a server still talking while it shuts
/// down would.
fn write_after_close() -> io::Result<()> {
    let mut stdout = io::stdout().lock();
    let mut line = vec![b'z'; 1023];
    line.push(b'\n');
    for _ in 0..1024 {
        stdout.write_all(&line)?;
    }
    stdout.flush()
}

/// Starts `sleep 1000` and reports its pid on stderr.
fn grandchild() -> io::Result<()> {
    let child = Command::new("sleep")
        .arg("1000")
        .stdin(Stdio::null())
        .spawn()?;
    writeln!(io::stderr(), "grandchild {}", child.id())
}

fn sleep_forever() -> ! {
    loop {
        std::thread::sleep(Duration::from_hours(1));
    }
}
