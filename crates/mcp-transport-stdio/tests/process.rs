//! Tests of spawning and managing server processes (`src/process.rs`) against the
//! `mcp-stdio-fixture` binary, and of `ExitAwareReader` over an in-memory reader.
//!
//! Process tests run in real time, because the other side is a real process.
//! They never sleep to synchronize: they wait for lines, for the exit watch, or
//! for a process to disappear, each under a timeout that only bounds a failure.
//! The `ExitAwareReader` tests run on Tokio's paused clock.

#![cfg(unix)]

use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use mcp_jsonrpc::{FrameReader, TransportError};
use mcp_test_support::Recorder;
use mcp_transport_stdio::{
    ExitAwareReader, ProcessError, STDERR_LINE_LIMIT, ServerCommand, SpawnedServer, StderrMode,
};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{ChildStdin, ChildStdout};
use tokio::sync::{mpsc, watch};
use tokio::time::{Instant, timeout};

const FIXTURE: &str = env!("CARGO_BIN_EXE_mcp-stdio-fixture");

/// The bound on anything a test waits for. Reaching it is a failure.
const PATIENCE: Duration = Duration::from_secs(10);

/// Short shutdown graces, so that escalation tests do not wait long for them.
const GRACE: Duration = Duration::from_millis(200);

fn fixture(mode: &str) -> ServerCommand {
    ServerCommand::new(FIXTURE)
        .arg(mode)
        .stderr(StderrMode::Discard)
}

/// A stderr callback that sends every line to a channel.
fn stderr_channel() -> (StderrMode, mpsc::UnboundedReceiver<String>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let mode = StderrMode::callback(move |line| {
        let _ = tx.send(line.to_owned());
    });
    (mode, rx)
}

/// Waits for the stderr line that starts with `prefix` and returns the rest.
async fn stderr_line(lines: &mut mpsc::UnboundedReceiver<String>, prefix: &str) -> String {
    timeout(PATIENCE, async {
        loop {
            let line = lines
                .recv()
                .await
                .expect("stderr ended before the expected line");
            if let Some(rest) = line.strip_prefix(prefix) {
                return rest.to_owned();
            }
        }
    })
    .await
    .expect("timed out waiting for a stderr line")
}

fn request(id: u64, method: &str, params: &Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

fn reply(id: u64, params: &Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "result": {"echo": params}}).to_string()
}

/// The raw line-level view of a server's pipes, independent of the framing module.
struct Pipes {
    stdin: ChildStdin,
    stdout: Lines<BufReader<ChildStdout>>,
}

impl Pipes {
    fn new(stdin: ChildStdin, stdout: ChildStdout) -> Self {
        Pipes {
            stdin,
            stdout: BufReader::new(stdout).lines(),
        }
    }

    async fn send(&mut self, line: &str) {
        self.stdin
            .write_all(format!("{line}\n").as_bytes())
            .await
            .expect("write to the server");
    }

    /// The next stdout line, or `None` at end of file.
    async fn recv(&mut self) -> Option<String> {
        timeout(PATIENCE, self.stdout.next_line())
            .await
            .expect("timed out reading the server's stdout")
            .expect("read the server's stdout")
    }

    async fn round_trip(&mut self, id: u64) {
        let params = json!({"n": id});
        self.send(&request(id, "test/echo", &params)).await;
        assert_eq!(self.recv().await, Some(reply(id, &params)));
    }
}

/// The `grandchild` fixture with both graces [`GRACE`], and the lines of its stderr.
fn graceful_grandchild() -> (ServerCommand, mpsc::UnboundedReceiver<String>) {
    let (mode, lines) = stderr_channel();
    let command = fixture("grandchild")
        .stderr(mode)
        .stdin_close_grace(GRACE)
        .term_grace(GRACE);
    (command, lines)
}

/// The pid of its child that the `grandchild` fixture reports on stderr.
async fn grandchild_pid(lines: &mut mpsc::UnboundedReceiver<String>) -> u32 {
    stderr_line(lines, "grandchild ").await.parse().unwrap()
}

fn spawn(command: &ServerCommand) -> (Pipes, mcp_transport_stdio::ServerProcess) {
    let SpawnedServer {
        stdin,
        stdout,
        process,
        ..
    } = command.spawn().expect("spawn the fixture");
    (Pipes::new(stdin, stdout), process)
}

/// Reads a process's state from `/proc`: `None` if it is gone, else its state
/// letter (`Z` for a zombie, which has exited but not been reaped by init yet).
fn proc_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(") ")
        .and_then(|(_, rest)| rest.chars().next())
}

fn is_running(pid: u32) -> bool {
    proc_state(pid).is_some_and(|state| state != 'Z')
}

/// Waits for a process that is not our child to be gone; a failure after [`PATIENCE`]
/// (init reaps it in its own time, later still on a loaded machine).
async fn assert_ends(pid: u32) {
    let deadline = Instant::now() + PATIENCE;
    while is_running(pid) {
        assert!(Instant::now() < deadline, "process {pid} still running");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

// ---------------------------------------------------------------------------
// Exchanges: lines in, lines out, exit status.

/// Writes `input` to a fixture in `mode`, closes its stdin, and checks that its
/// stdout is exactly `output` and it exits with `code`.
async fn check_exchange(mode: &[&str], input: &[String], output: &[String], code: i32) {
    let command = ServerCommand::new(FIXTURE)
        .args(mode)
        .stderr(StderrMode::Discard);
    let (mut pipes, process) = spawn(&command);
    // A server that exits early may close its stdin before all input is written,
    // so a failed write is no failure here; the output and the status tell.
    let input = input.join("\n") + "\n";
    let _ = pipes.stdin.write_all(input.as_bytes()).await;
    drop(pipes.stdin);
    let mut lines = Vec::new();
    while let Some(line) = timeout(PATIENCE, pipes.stdout.next_line())
        .await
        .unwrap()
        .unwrap()
    {
        lines.push(line);
    }
    assert_eq!(lines, output, "mode {mode:?}");
    let status = timeout(PATIENCE, process.exited())
        .await
        .unwrap()
        .expect("an exit status");
    assert_eq!(status.code(), Some(code), "mode {mode:?}");
    assert_eq!(process.try_status(), Some(status));
}

#[tokio::test]
async fn exchanges() {
    let params = json!({"text": "hi", "list": [1, 2]});
    let notification = json!({"jsonrpc": "2.0", "method": "notifications/x"}).to_string();
    let pollution = "debug: hello".to_owned();
    check_exchange(
        &["echo"],
        &[
            request(1, "a", &params),
            notification.clone(),
            "not json".into(),
            request(2, "b", &Value::Null),
        ],
        &[reply(1, &params), reply(2, &Value::Null)],
        0,
    )
    .await;
    check_exchange(
        &["pollute"],
        &[request(1, "a", &params), request(2, "b", &params)],
        &[
            pollution.clone(),
            reply(1, &params),
            pollution,
            reply(2, &params),
        ],
        0,
    )
    .await;
    check_exchange(
        &["crash-on", "boom"],
        &[
            request(1, "a", &params),
            request(2, "boom", &params),
            request(3, "c", &params),
        ],
        &[reply(1, &params)],
        3,
    )
    .await;
}

#[tokio::test]
async fn crash_mid_request_resolves_exited() {
    let (mut pipes, process) = spawn(&fixture("crash-on").arg("boom"));
    pipes.round_trip(1).await;
    assert_eq!(process.try_status(), None);
    let exited = process.exited();
    pipes.send(&request(2, "boom", &Value::Null)).await;
    let status = timeout(PATIENCE, exited)
        .await
        .unwrap()
        .expect("an exit status");
    assert_eq!(status.code(), Some(3));
    assert_eq!(pipes.recv().await, None, "stdout ends with the process");
}

// ---------------------------------------------------------------------------
// How the process is started.

/// Runs `/usr/bin/env` under `command`'s settings and returns its output lines.
async fn env_of(command: ServerCommand) -> Vec<String> {
    let (mut pipes, process) = spawn(&command);
    let mut lines = Vec::new();
    while let Some(line) = pipes.recv().await {
        lines.push(line);
    }
    lines.sort();
    process.shutdown(Some(pipes.stdin)).await.unwrap();
    lines
}

#[tokio::test]
async fn environment_is_explicit() {
    let path = std::env::var("PATH").expect("the test process has a PATH");
    let env = || ServerCommand::new("/usr/bin/env").env("MCP_FIXTURE_VAR", "hello");

    assert_eq!(
        env_of(env()).await,
        ["MCP_FIXTURE_VAR=hello"],
        "nothing inherited"
    );
    assert_eq!(
        env_of(
            env()
                .inherit_var("PATH")
                .inherit_var("MCP_UNSET_VAR_FOR_TEST")
        )
        .await,
        ["MCP_FIXTURE_VAR=hello".to_owned(), format!("PATH={path}")],
        "one variable inherited",
    );
    // The default set: each of its variables that is set here, and nothing else.
    let mut defaults: Vec<String> = mcp_transport_stdio::DEFAULT_INHERITED_VARS
        .iter()
        .filter_map(|key| {
            std::env::var(key)
                .ok()
                .map(|value| format!("{key}={value}"))
        })
        .chain(["MCP_FIXTURE_VAR=hello".to_owned()])
        .collect();
    defaults.sort();
    assert!(defaults.contains(&format!("PATH={path}")));
    assert_eq!(
        env_of(env().inherit_default_vars()).await,
        defaults,
        "the default set inherited"
    );
    let all = env_of(env().env("PATH", "/explicit").inherit_env(true)).await;
    assert!(all.contains(&"MCP_FIXTURE_VAR=hello".to_owned()), "{all:?}");
    assert!(
        all.contains(&"PATH=/explicit".to_owned()),
        "explicit beats inherited: {all:?}"
    );
    for (key, value) in std::env::vars().filter(|(k, v)| k != "PATH" && !v.contains('\n')) {
        let var = format!("{key}={value}");
        assert!(all.contains(&var), "{var} inherited: {all:?}");
    }
}

#[tokio::test]
async fn working_directory_is_honoured() {
    let dir = std::fs::canonicalize(env!("CARGO_MANIFEST_DIR")).unwrap();
    let (mut pipes, process) = spawn(&ServerCommand::new("/bin/pwd").current_dir(&dir));
    assert_eq!(pipes.recv().await.as_deref(), dir.to_str());
    let status = process.shutdown(Some(pipes.stdin)).await.unwrap();
    assert!(status.success());
}

#[tokio::test]
async fn spawn_failure_names_the_program() {
    let error = ServerCommand::new("/nonexistent/mcp-server")
        .spawn()
        .unwrap_err();
    assert!(matches!(&error, ProcessError::Spawn { program, source }
        if program == "/nonexistent/mcp-server" && source.kind() == std::io::ErrorKind::NotFound));
    assert_eq!(
        error.to_string(),
        "failed to spawn MCP server `/nonexistent/mcp-server`"
    );
}

#[test]
fn spawn_outside_a_runtime_is_an_error() {
    let error = fixture("echo").spawn().unwrap_err();
    assert!(matches!(error, ProcessError::NoRuntime));
}

#[test]
fn error_is_send_sync_static() {
    fn assert_error<E: std::error::Error + Send + Sync + 'static>() {}
    assert_error::<ProcessError>();
}

// ---------------------------------------------------------------------------
// Stderr.

#[tokio::test]
async fn stderr_lines_are_logged_by_default() {
    // The events of the stderr task, standing in for a real subscriber. The runtime of this
    // test has one thread, so the stderr task sees this thread's default subscriber.
    let events = Recorder::new(|metadata| metadata.target() == "mcp_transport_stdio::stderr");
    let _guard = tracing::subscriber::set_default(events.clone());
    let command = ServerCommand::new(FIXTURE).arg("echo").name("fixture");
    let (mut pipes, process) = spawn(&command);
    pipes.round_trip(1).await;
    // Shutdown lets the stderr task reach end of file.
    process.shutdown(Some(pipes.stdin)).await.unwrap();
    let fields = BTreeMap::from([
        ("message", "mcp-stdio-fixture echo started".to_owned()),
        ("server", "fixture".to_owned()),
        ("truncated", "false".to_owned()),
    ]);
    let seen: Vec<_> = events
        .events()
        .into_iter()
        .map(|event| (event.level, event.fields))
        .collect();
    assert_eq!(seen, [(tracing::Level::INFO, fields)]);
}

#[tokio::test]
async fn stderr_lines_reach_the_callback() {
    let (mode, mut lines) = stderr_channel();
    let (mut pipes, process) = spawn(&fixture("echo").stderr(mode));
    assert_eq!(
        stderr_line(&mut lines, "mcp-stdio-fixture ").await,
        "echo started"
    );
    pipes.round_trip(1).await;
    process.shutdown(Some(pipes.stdin)).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stderr_flood_neither_blocks_nor_buffers() {
    // Counts the lines of `y`, and sends the length of the line of `x` and every
    // other line on.
    let (tx, mut lines) = mpsc::unbounded_channel();
    let ys = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&ys);
    let mode = StderrMode::callback(move |line| match line.as_bytes().first() {
        Some(b'y') if line.len() == 1023 => {
            counted.fetch_add(1, Ordering::Relaxed);
        }
        Some(b'x') => {
            let _ = tx.send(format!("x {}", line.len()));
        }
        _ => {
            let _ = tx.send(line.to_owned());
        }
    });
    let (mut pipes, process) = spawn(&fixture("stderr-flood").stderr(mode));
    // The fixture answers only after writing all 50 MiB, which would block for
    // ever on a full pipe if the stderr reader stopped reading.
    pipes.round_trip(1).await;
    assert_eq!(stderr_line(&mut lines, "flood ").await, "start");
    assert_eq!(
        stderr_line(&mut lines, "x ").await,
        STDERR_LINE_LIMIT.to_string()
    );
    assert_eq!(stderr_line(&mut lines, "flood ").await, "end");
    assert_eq!(ys.load(Ordering::Relaxed), 49 * 1024);
    process.shutdown(Some(pipes.stdin)).await.unwrap();
}

#[tokio::test]
async fn a_stderr_line_at_the_limit_is_whole_and_one_past_it_is_cut() {
    // A line of exactly `STDERR_LINE_LIMIT` bytes of `a`, one of a byte more of
    // `b`, then `done`; the callback sends each line's first byte and length on.
    let (tx, mut lines) = mpsc::unbounded_channel();
    let mode = StderrMode::callback(move |line| {
        let first = line.chars().next().unwrap_or('-');
        let _ = tx.send(format!("{first} {}", line.len()));
    });
    let script = format!(
        "head -c {at} /dev/zero | tr '\\0' a >&2; echo >&2; \
         head -c {past} /dev/zero | tr '\\0' b >&2; echo >&2; echo done >&2",
        at = STDERR_LINE_LIMIT,
        past = STDERR_LINE_LIMIT + 1,
    );
    let command = ServerCommand::new("/bin/sh")
        .arg("-c")
        .arg(script)
        .stderr(mode);
    let (pipes, process) = spawn(&command);
    assert_eq!(
        stderr_line(&mut lines, "a ").await,
        STDERR_LINE_LIMIT.to_string(),
        "the line at the limit is kept whole"
    );
    assert_eq!(
        stderr_line(&mut lines, "b ").await,
        STDERR_LINE_LIMIT.to_string(),
        "the line one byte past the limit is cut to it"
    );
    // Nothing of the cut line's last byte became a line of its own.
    assert_eq!(lines.recv().await.as_deref(), Some("d 4"));
    let status = process.shutdown(Some(pipes.stdin)).await.unwrap();
    assert_eq!(status.code(), Some(0), "{status}");
}

// ---------------------------------------------------------------------------
// Shutdown.

#[tokio::test]
async fn shutdown_of_a_well_behaved_server_needs_no_signal() {
    // Graces far longer than a loaded machine needs to end a process: an exit status
    // rather than a signal shows that closing stdin was enough.
    let command = ServerCommand::new(FIXTURE)
        .arg("echo")
        .stdin_close_grace(Duration::from_secs(30))
        .term_grace(Duration::from_secs(30));
    let (mut pipes, process) = spawn(&command);
    pipes.round_trip(1).await;
    let status = process.shutdown(Some(pipes.stdin)).await.unwrap();
    assert_eq!(status.code(), Some(0), "exited by itself: {status}");
}

#[tokio::test]
async fn shutdown_sends_sigterm_to_a_server_that_ignores_stdin_close() {
    let command = fixture("never-read")
        .stdin_close_grace(GRACE)
        .term_grace(Duration::from_mins(1));
    let (pipes, process) = spawn(&command);
    let started = Instant::now();
    let status = process.shutdown(Some(pipes.stdin)).await.unwrap();
    assert_eq!(status.signal(), Some(15), "{status}");
    // SIGTERM came once stdin's grace was over, and shutdown returned when the server
    // died of it rather than at the end of the minute it would give it (the margin is
    // whole seconds: the machine may be loaded).
    let took = started.elapsed();
    assert!(
        took >= GRACE && took < Duration::from_secs(30),
        "took {took:?}"
    );
}

#[tokio::test]
async fn shutdown_sends_sigkill_to_a_server_that_ignores_sigterm() {
    let script = format!("trap '' TERM; exec '{FIXTURE}' ignore-stdin-close");
    let command = ServerCommand::new("/bin/sh")
        .args(["-c", &script])
        .stderr(StderrMode::Discard)
        .stdin_close_grace(GRACE)
        .term_grace(GRACE);
    let (mut pipes, process) = spawn(&command);
    // A reply shows the shell has run `trap` and `exec`.
    pipes.round_trip(1).await;
    let started = Instant::now();
    let status = process.shutdown(Some(pipes.stdin)).await.unwrap();
    assert_eq!(status.signal(), Some(9), "{status}");
    // SIGKILL only once both graces were over.
    let took = started.elapsed();
    assert!(took >= 2 * GRACE, "took {took:?}");
}

#[tokio::test]
async fn shutdown_ends_grandchildren() {
    let (command, mut lines) = graceful_grandchild();
    let (mut pipes, process) = spawn(&command);
    let grandchild = grandchild_pid(&mut lines).await;
    pipes.round_trip(1).await;
    assert!(is_running(grandchild));
    let status = process.shutdown(Some(pipes.stdin)).await.unwrap();
    assert_eq!(
        status.code(),
        Some(0),
        "the server itself exited at stdin close"
    );
    assert_ends(grandchild).await;
}

#[tokio::test]
async fn dropping_the_handle_kills_the_group() {
    let (mode, mut lines) = stderr_channel();
    let (mut pipes, process) = spawn(&fixture("grandchild").stderr(mode));
    let grandchild = grandchild_pid(&mut lines).await;
    pipes.round_trip(1).await;
    let server = process.id();
    drop(process);
    assert_ends(server).await;
    assert_ends(grandchild).await;
}

// ---------------------------------------------------------------------------
// Backpressure.

#[tokio::test]
async fn a_server_that_never_reads_pushes_back() {
    let command = fixture("never-read")
        .stdin_close_grace(Duration::ZERO)
        .term_grace(GRACE);
    let SpawnedServer {
        mut stdin, process, ..
    } = command.spawn().unwrap();
    let ten_mib = vec![b' '; 10 << 20];
    let write = timeout(Duration::from_millis(200), stdin.write_all(&ten_mib)).await;
    assert!(
        write.is_err(),
        "10 MiB were accepted by a server that reads nothing"
    );
    process.shutdown(Some(stdin)).await.unwrap();
}

// ---------------------------------------------------------------------------
// ExitAwareReader over a real server.

/// A line reader over a server's stdout, standing in for the framing module.
struct StdoutLines(Lines<BufReader<ChildStdout>>);

impl FrameReader for StdoutLines {
    async fn read_frame(&mut self) -> Option<Result<Bytes, TransportError>> {
        match self.0.next_line().await {
            Ok(Some(line)) => Some(Ok(Bytes::from(line))),
            Ok(None) => None,
            Err(error) => Some(Err(error.into())),
        }
    }
}

/// The reason of a `Closed` error.
fn closed_reason(read: Option<&Result<Bytes, TransportError>>) -> Option<&str> {
    match read {
        Some(Err(TransportError::Closed(Some(reason)))) => Some(reason),
        _ => None,
    }
}

#[tokio::test]
async fn exit_ends_reading_although_a_grandchild_holds_stdout() {
    let (command, mut lines) = graceful_grandchild();
    let SpawnedServer {
        mut stdin,
        stdout,
        process,
        ..
    } = command.spawn().unwrap();
    let grandchild = grandchild_pid(&mut lines).await;
    let mut reader = ExitAwareReader::new(
        StdoutLines(BufReader::new(stdout).lines()),
        process.exit_watch(),
    );

    let params = json!([1]);
    stdin
        .write_all(format!("{}\n", request(7, "a", &params)).as_bytes())
        .await
        .unwrap();
    drop(stdin);
    let frame = timeout(PATIENCE, reader.read_frame())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(frame, reply(7, &params).as_bytes());
    let end = timeout(PATIENCE, reader.read_frame())
        .await
        .expect("reading ended despite the grandchild");
    let reason = "server process exited with exit status: 0";
    assert_eq!(closed_reason(end.as_ref()), Some(reason), "{end:?}");
    assert!(reader.read_frame().await.is_none());
    assert!(is_running(grandchild), "the grandchild still held stdout");

    process.shutdown(None).await.unwrap();
    assert_ends(grandchild).await;
}

// ---------------------------------------------------------------------------
// ExitAwareReader over an in-memory reader, on the paused clock.

/// A frame reader over a channel: each message is one `read_frame` result, and
/// dropping the sender is end of file.
struct ChannelReader(mpsc::UnboundedReceiver<Result<Bytes, TransportError>>);

impl FrameReader for ChannelReader {
    async fn read_frame(&mut self) -> Option<Result<Bytes, TransportError>> {
        self.0.recv().await
    }
}

/// What happens on the server's side, in order.
#[derive(Clone, Copy, Debug)]
enum Step {
    /// The server writes a frame.
    Frame(&'static str),
    /// The reader reports a frame that was too long.
    TooLong,
    /// The reader fails with an I/O error.
    IoError,
    /// The server exits with this exit code.
    Exit(i32),
    /// The exit watch is dropped without a status.
    LoseStatus,
    /// The server's stdout reaches end of file.
    Eof,
    /// Time passes.
    Wait(u64),
}

/// What a read returned, and when (in milliseconds from the start).
#[derive(Debug, PartialEq)]
enum Read {
    Frame(String, u64),
    TooLong(u64),
    Io(u64),
    Closed(String, u64),
    End(u64),
}

/// Plays `steps` on the server's side while reading until the end, and compares
/// what each read returned, and when, with `expected`.
async fn check_reader(steps: &[Step], expected: &[Read]) {
    let (frames, rx) = mpsc::unbounded_channel();
    let (exit, exit_rx) = watch::channel(None);
    let mut reader = ExitAwareReader::new(ChannelReader(rx), exit_rx);
    let script = steps.to_vec();
    let server = tokio::spawn(async move {
        let mut frames = Some(frames);
        let mut exit = Some(exit);
        for step in script {
            let send = |frame| frames.as_ref().map(|f| f.send(frame).is_ok());
            match step {
                Step::Frame(text) => _ = send(Ok(Bytes::from_static(text.as_bytes()))),
                Step::TooLong => _ = send(Err(TransportError::FrameTooLong { limit: 10 })),
                Step::IoError => _ = send(Err(std::io::Error::other("broken").into())),
                Step::Exit(code) => {
                    if let Some(exit) = &exit {
                        exit.send_replace(Some(ExitStatus::from_raw(code << 8)));
                    }
                }
                Step::LoseStatus => exit = None,
                Step::Eof => frames = None,
                Step::Wait(ms) => tokio::time::sleep(Duration::from_millis(ms)).await,
            }
        }
        // Keep the pipe open, as a grandchild would.
        std::future::pending::<()>().await;
        drop((frames, exit));
    });

    let start = Instant::now();
    let mut reads = Vec::new();
    loop {
        let read = reader.read_frame().await;
        let at = u64::try_from(start.elapsed().as_millis()).unwrap();
        reads.push(match read {
            Some(Ok(frame)) => Read::Frame(String::from_utf8(frame.to_vec()).unwrap(), at),
            Some(Err(TransportError::FrameTooLong { .. })) => Read::TooLong(at),
            Some(Err(TransportError::Io(_))) => Read::Io(at),
            Some(Err(TransportError::Closed(reason))) => Read::Closed(reason.unwrap(), at),
            Some(Err(other)) => panic!("unexpected error {other:?}"),
            None => Read::End(at),
        });
        if reads.len() > expected.len() + 2 || matches!(reads.last(), Some(Read::End(_))) {
            break;
        }
    }
    assert_eq!(reads, expected, "steps {steps:?}");
    assert!(reader.read_frame().await.is_none(), "the end is sticky");
    server.abort();
}

fn frame(text: &str, at: u64) -> Read {
    Read::Frame(text.to_owned(), at)
}

fn closed(code: i32, at: u64) -> Read {
    Read::Closed(
        format!("server process exited with exit status: {code}"),
        at,
    )
}

#[tokio::test(start_paused = true)]
async fn exit_aware_reader() {
    use Read::{End, Io, TooLong};
    use Step::{Eof, Exit, IoError, LoseStatus, Wait};

    // Frames written before the exit are delivered, then one wait for more.
    check_reader(
        &[Step::Frame("a"), Step::Frame("b"), Exit(3)],
        &[frame("a", 0), frame("b", 0), closed(3, 100), End(100)],
    )
    .await;
    // End of file after the exit ends reading at once.
    check_reader(
        &[Step::Frame("a"), Exit(0), Eof],
        &[frame("a", 0), closed(0, 0), End(0)],
    )
    .await;
    // Each read after the exit may wait the grace: slow output still arrives.
    check_reader(
        &[
            Exit(1),
            Wait(60),
            Step::Frame("late"),
            Wait(60),
            Step::Frame("later"),
        ],
        &[
            frame("late", 60),
            frame("later", 120),
            closed(1, 220),
            End(220),
        ],
    )
    .await;
    // End of file first, then the exit within the grace.
    check_reader(
        &[Step::Frame("a"), Eof, Wait(30), Exit(2)],
        &[frame("a", 0), closed(2, 30), End(30)],
    )
    .await;
    // End of file, and the server keeps running: a plain end.
    check_reader(
        &[Step::Frame("a"), Wait(10), Eof],
        &[frame("a", 0), End(110)],
    )
    .await;
    // The status is lost (the process handle was dropped).
    check_reader(
        &[LoseStatus],
        &[
            Read::Closed("server process exited (exit status unknown)".into(), 100),
            End(100),
        ],
    )
    .await;
    // A recoverable error passes through, and reading goes on.
    check_reader(
        &[Step::TooLong, Step::Frame("a"), Exit(0)],
        &[TooLong(0), frame("a", 0), closed(0, 100), End(100)],
    )
    .await;
    // An error that ends the stream passes through, and ends it.
    check_reader(&[IoError, Step::Frame("a")], &[Io(0), End(0)]).await;
}

#[tokio::test(start_paused = true)]
async fn exit_aware_reader_drain_grace_is_configurable() {
    let (_frames, rx) = mpsc::unbounded_channel();
    let (exit, exit_rx) = watch::channel(None);
    let mut reader =
        ExitAwareReader::new(ChannelReader(rx), exit_rx).with_drain_grace(Duration::from_secs(3));
    exit.send_replace(Some(ExitStatus::from_raw(9)));
    let start = Instant::now();
    let end = reader.read_frame().await;
    let reason = "server process exited with signal: 9 (SIGKILL)";
    assert_eq!(closed_reason(end.as_ref()), Some(reason), "{end:?}");
    assert_eq!(start.elapsed(), Duration::from_secs(3));
}
