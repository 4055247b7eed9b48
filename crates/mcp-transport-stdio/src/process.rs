//! Spawning and managing an MCP server as a child process: the client side of
//! <https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/stdio>.
//!
//! [`ServerCommand`] says how to start a server; [`ServerCommand::spawn`] starts it
//! and hands back its stdin and stdout pipes with a [`ServerProcess`] handle. The
//! handle owns the two tasks this module spawns: the waiter, which reaps the child
//! and publishes its exit status on a watch channel, and the stderr reader, which
//! forwards the child's stderr line by line with a bound on every line. A third
//! task, started when the connection's reader of stdout is dropped, reads and
//! discards the child's stdout until the child is gone.
//! [`ServerProcess::shutdown`] runs the spec's shutdown sequence on the child's
//! whole process group. The exit status it publishes is what
//! [`ExitAwareReader`](crate::ExitAwareReader) and
//! [`ExitAwareWriter`](crate::ExitAwareWriter) watch.
//!
//! Signals and process groups are Unix only. Elsewhere the process is started
//! the same way and forced termination kills the child alone.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::future::Future;
use std::io;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, ReadBuf};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::timeout;

/// The longest stderr line forwarded, in bytes: 8 KiB.
///
/// The first `STDERR_LINE_LIMIT` bytes of a longer line are forwarded as soon as
/// they arrive, and the rest of the line, up to the next newline, is read and
/// discarded without being buffered.
pub const STDERR_LINE_LIMIT: usize = 8 * 1024;

/// How long [`ExitAwareReader`](crate::ExitAwareReader) waits for more output once the
/// server has exited, unless its `with_drain_grace` says otherwise: 100 ms.
pub const DEFAULT_DRAIN_GRACE: Duration = Duration::from_millis(100);

/// The tracing target of forwarded stderr lines in [`StderrMode::Tracing`].
const STDERR_TARGET: &str = "mcp_transport_stdio::stderr";

/// How much of the stderr pipe is read at once. The reader holds this buffer and
/// one line of at most [`STDERR_LINE_LIMIT`] bytes, nothing more.
const STDERR_READ_CHUNK: usize = 64 * 1024;

/// The variables [`ServerCommand::inherit_default_vars`] passes on: the TypeScript SDK's
/// default environment for a stdio server on Unix, so that a command such as `npx` is
/// found and runs as the user, while secrets in other variables stay with this process.
pub const DEFAULT_INHERITED_VARS: [&str; 6] = ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"];

/// How long [`ServerProcess::shutdown`] waits for a SIGKILLed child to be reaped
/// before reporting [`ProcessError::NotReaped`]. Only a process stuck in an
/// uninterruptible kernel wait takes this long.
const REAP_LIMIT: Duration = Duration::from_secs(5);

/// How long shutdown waits for the stderr reader (and the stdout drain) to reach
/// end of file once the process group is gone, before aborting it.
const STDERR_JOIN_LIMIT: Duration = Duration::from_millis(100);

/// How much of the stdout pipe the drain reads at once; all it ever holds.
const STDOUT_DRAIN_CHUNK: usize = 16 * 1024;

/// The default of [`ServerCommand::stdin_close_grace`]: 2 s.
const DEFAULT_STDIN_CLOSE_GRACE: Duration = Duration::from_secs(2);

/// The default of [`ServerCommand::term_grace`]: 3 s.
const DEFAULT_TERM_GRACE: Duration = Duration::from_secs(3);

/// How often shutdown checks whether processes left in the group after the
/// server exited are gone. They are not our children, so nothing notifies us.
#[cfg(unix)]
const GROUP_POLL_INTERVAL: Duration = Duration::from_millis(10);

/// Why a server process could not be started or stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProcessError {
    /// The operating system refused to start the program.
    #[error("failed to spawn MCP server `{program}`")]
    Spawn {
        /// The program, as given to [`ServerCommand::new`].
        program: String,
        /// The error from the operating system.
        #[source]
        source: io::Error,
    },
    /// [`ServerCommand::spawn`] was called outside a Tokio runtime.
    #[error("spawning an MCP server needs a Tokio runtime, and none is running")]
    NoRuntime,
    /// A signal could not be sent to the server's process group.
    #[error("failed to signal the process group of MCP server pid {pid}")]
    Signal {
        /// The server's process id, which is also its process group id.
        pid: u32,
        /// The error from the operating system.
        #[source]
        source: io::Error,
    },
    /// Waiting for the server failed, so its exit status is unknown. The process
    /// group has been killed all the same.
    #[error("the exit status of MCP server pid {pid} could not be learned")]
    StatusUnavailable {
        /// The server's process id.
        pid: u32,
    },
    /// The server was still running this long after SIGKILL.
    #[error("MCP server pid {pid} was still running {waited:?} after SIGKILL")]
    NotReaped {
        /// The server's process id.
        pid: u32,
        /// How long shutdown waited after SIGKILL.
        waited: Duration,
    },
}

/// Where a server's stderr goes.
///
/// The spec lets a server write anything to stderr and tells the client not to
/// read it as an error (<https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/stdio>), so every
/// mode treats it as log text. In the two forwarding modes a task reads the pipe
/// as fast as the child writes, lines longer than [`STDERR_LINE_LIMIT`] are cut
/// to that length, and invalid UTF-8 is replaced with U+FFFD. The reader never
/// touches stdout, so a flood of stderr can slow only itself.
#[derive(Clone, Default)]
#[non_exhaustive]
pub enum StderrMode {
    /// Log each line with `tracing` at info level, target
    /// `mcp_transport_stdio::stderr`, with the server's name in the `server`
    /// field and `truncated = true` on a cut line. This is the default.
    #[default]
    Tracing,
    /// Call the function with each line, without its line ending. It runs on the
    /// reader task, so it must return quickly; while it runs the pipe is not read.
    /// If it panics, the panic is logged and later lines are read and dropped.
    Callback(Arc<dyn Fn(&str) + Send + Sync>),
    /// Connect stderr to the null device.
    Discard,
    /// Let the child write to this process's stderr.
    Inherit,
}

impl StderrMode {
    /// A [`StderrMode::Callback`] calling `f` with each line.
    pub fn callback(f: impl Fn(&str) + Send + Sync + 'static) -> Self {
        StderrMode::Callback(Arc::new(f))
    }
}

impl fmt::Debug for StderrMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            StderrMode::Tracing => "Tracing",
            StderrMode::Callback(_) => "Callback(..)",
            StderrMode::Discard => "Discard",
            StderrMode::Inherit => "Inherit",
        })
    }
}

/// How to start an MCP server process, as a builder.
///
/// The program is started directly, never through a shell, with piped stdin and
/// stdout (<https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/stdio>). On Unix it leads a new
/// process group, so that the signals of [`ServerProcess::shutdown`] reach
/// everything it starts.
///
/// The environment is explicit: the child gets only the variables set with
/// [`env`](Self::env) and [`inherit_var`](Self::inherit_var), unless
/// [`inherit_env(true)`](Self::inherit_env) passes on the whole environment of
/// this process (explicit variables still win). That includes `PATH`: a program
/// given without a directory is looked up in the `PATH` the child will have, and
/// with no `PATH` at all in the C library's default search path (typically
/// `/bin:/usr/bin`). Give an absolute path, or call `.inherit_var("PATH")`.
///
/// # Example
///
/// ```
/// # #[cfg(unix)]
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use mcp_transport_stdio::ServerCommand;
/// use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
///
/// let server = ServerCommand::new("/bin/cat").name("cat").spawn()?;
/// let mut stdin = server.stdin;
/// let mut stdout = BufReader::new(server.stdout).lines();
///
/// stdin.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":1}\n").await?;
/// let line = stdout.next_line().await?;
/// assert_eq!(line.as_deref(), Some(r#"{"jsonrpc":"2.0","method":"ping","id":1}"#));
///
/// // `cat` exits at end of input, so this closes stdin and sends no signal.
/// let status = server.process.shutdown(Some(stdin)).await?;
/// assert!(status.success());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Clone, Debug)]
pub struct ServerCommand {
    program: OsString,
    args: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
    inherited_vars: Vec<OsString>,
    inherit_env: bool,
    current_dir: Option<PathBuf>,
    stderr: StderrMode,
    name: Option<String>,
    stdin_close_grace: Duration,
    term_grace: Duration,
}

impl ServerCommand {
    /// A command that runs `program` with no arguments, an empty environment, this
    /// process's working directory, stderr forwarded to `tracing`, and the default
    /// shutdown graces (2 s after closing stdin, 3 s after SIGTERM).
    pub fn new(program: impl AsRef<OsStr>) -> Self {
        ServerCommand {
            program: program.as_ref().to_owned(),
            args: Vec::new(),
            env: Vec::new(),
            inherited_vars: Vec::new(),
            inherit_env: false,
            current_dir: None,
            stderr: StderrMode::default(),
            name: None,
            stdin_close_grace: DEFAULT_STDIN_CLOSE_GRACE,
            term_grace: DEFAULT_TERM_GRACE,
        }
    }

    /// Adds one argument.
    #[must_use]
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    /// Adds several arguments.
    #[must_use]
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    /// Sets an environment variable for the child. A later value for the same key
    /// replaces an earlier one, and an explicit value beats an inherited one.
    #[must_use]
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.env
            .push((key.as_ref().to_owned(), value.as_ref().to_owned()));
        self
    }

    /// Sets several environment variables, as [`env`](Self::env) does.
    #[must_use]
    pub fn envs<I, K, V>(mut self, vars: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        for (key, value) in vars {
            self = self.env(key, value);
        }
        self
    }

    /// Passes one variable of this process's environment on to the child, if it is
    /// set when [`spawn`](Self::spawn) runs. `.inherit_var("PATH")` is the usual one.
    #[must_use]
    pub fn inherit_var(mut self, key: impl AsRef<OsStr>) -> Self {
        self.inherited_vars.push(key.as_ref().to_owned());
        self
    }

    /// Passes on [`DEFAULT_INHERITED_VARS`], the variables a program needs to be found and
    /// to run as its user (`PATH`, `HOME`, …), and no others: what MCP hosts commonly give
    /// a stdio server whose configuration sets no environment of its own.
    #[must_use]
    pub fn inherit_default_vars(mut self) -> Self {
        for var in DEFAULT_INHERITED_VARS {
            self = self.inherit_var(var);
        }
        self
    }

    /// Whether the child inherits this process's whole environment. Off by
    /// default: servers get only what they are given.
    #[must_use]
    pub fn inherit_env(mut self, inherit: bool) -> Self {
        self.inherit_env = inherit;
        self
    }

    /// Sets the child's working directory.
    #[must_use]
    pub fn current_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.current_dir = Some(dir.as_ref().to_owned());
        self
    }

    /// Sets where the child's stderr goes.
    #[must_use]
    pub fn stderr(mut self, mode: StderrMode) -> Self {
        self.stderr = mode;
        self
    }

    /// Names the server in logs. The default is the program's file name.
    #[must_use]
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// How long [`ServerProcess::shutdown`] waits for the server to exit after
    /// closing its stdin before sending SIGTERM (default 2 s).
    #[must_use]
    pub fn stdin_close_grace(mut self, grace: Duration) -> Self {
        self.stdin_close_grace = grace;
        self
    }

    /// How long [`ServerProcess::shutdown`] waits after SIGTERM before sending
    /// SIGKILL (default 3 s). Processes the server leaves behind in its group get
    /// the same grace between their SIGTERM and SIGKILL.
    #[must_use]
    pub fn term_grace(mut self, grace: Duration) -> Self {
        self.term_grace = grace;
        self
    }

    /// Starts the server.
    ///
    /// This must run inside a Tokio runtime with its IO and time drivers enabled:
    /// the child is reaped, and its stderr read, by tasks on that runtime. The
    /// command is not consumed, so the same server can be started again after it
    /// exits.
    pub fn spawn(&self) -> Result<SpawnedServer, ProcessError> {
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(ProcessError::NoRuntime);
        }
        let name = self.display_name();
        let spawn_error = |source| ProcessError::Spawn {
            program: self.program.to_string_lossy().into_owned(),
            source,
        };
        let mut child = self.command().spawn().map_err(spawn_error)?;
        // Dropping `child` on an early return kills it (`kill_on_drop`).
        let (Some(pid), Some(stdin), Some(stdout)) =
            (child.id(), child.stdin.take(), child.stdout.take())
        else {
            return Err(spawn_error(io::Error::other(
                "the child's pipes were not created",
            )));
        };
        let stderr = child.stderr.take();

        let (exit_tx, exit) = watch::channel(None);
        #[cfg(unix)]
        let waiter = tokio::spawn(wait_child(child, exit_tx));
        #[cfg(not(unix))]
        let (kill_tx, waiter) = {
            let (kill_tx, kill_rx) = tokio::sync::oneshot::channel();
            (kill_tx, tokio::spawn(wait_child(child, exit_tx, kill_rx)))
        };
        let sink = match &self.stderr {
            StderrMode::Tracing => Some(StderrSink::Tracing),
            StderrMode::Callback(f) => Some(StderrSink::Callback(Arc::clone(f))),
            StderrMode::Discard | StderrMode::Inherit => None,
        };
        let stderr_task = match (stderr, sink) {
            (Some(pipe), Some(sink)) => {
                Some(tokio::spawn(forward_stderr(pipe, sink, name.clone())))
            }
            _ => None,
        };
        tracing::debug!(server = %name, pid, "spawned MCP server");
        Ok(SpawnedServer {
            stdin,
            stdout,
            process: ServerProcess {
                pid,
                name,
                exit,
                waiter,
                stderr_task,
                stdout_drain: Arc::default(),
                stdin_close_grace: self.stdin_close_grace,
                term_grace: self.term_grace,
                group_may_live: true,
                #[cfg(not(unix))]
                kill: Some(kill_tx),
            },
        })
    }

    fn display_name(&self) -> String {
        match &self.name {
            Some(name) => name.clone(),
            None => Path::new(&self.program)
                .file_name()
                .unwrap_or(&self.program)
                .to_string_lossy()
                .into_owned(),
        }
    }

    fn command(&self) -> Command {
        let mut command = Command::new(&self.program);
        command.args(&self.args);
        if !self.inherit_env {
            command.env_clear();
        }
        for key in &self.inherited_vars {
            if let Some(value) = std::env::var_os(key) {
                command.env(key, value);
            }
        }
        command.envs(self.env.iter().map(|(k, v)| (k, v)));
        if let Some(dir) = &self.current_dir {
            command.current_dir(dir);
        }
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(match self.stderr {
                StderrMode::Tracing | StderrMode::Callback(_) => Stdio::piped(),
                StderrMode::Discard => Stdio::null(),
                StderrMode::Inherit => Stdio::inherit(),
            })
            .kill_on_drop(true);
        #[cfg(unix)]
        command.process_group(0);
        command
    }
}

/// A freshly started server: its two protocol pipes and the handle that manages
/// the process.
///
/// Hand `stdout` to a frame reader (wrapped in an [`ExitAwareReader`](crate::ExitAwareReader)) and
/// `stdin` to a frame writer. Writes to `stdin` go straight to the pipe, whose
/// kernel buffer is the only queue: a server that stops reading makes them wait
/// (backpressure), and the writer's timeout decides how long.
#[derive(Debug)]
#[non_exhaustive]
pub struct SpawnedServer {
    /// The server's stdin, where the client writes messages.
    pub stdin: ChildStdin,
    /// The server's stdout, where the client reads messages.
    pub stdout: ChildStdout,
    /// The handle that watches, stops and reaps the server.
    pub process: ServerProcess,
}

/// A running MCP server process and the tasks that watch it.
///
/// Dropping the handle without calling [`shutdown`](Self::shutdown) kills the
/// server's process group with SIGKILL at once (best effort, without blocking)
/// and aborts the tasks; the child is still reaped in the background.
#[derive(Debug)]
pub struct ServerProcess {
    pid: u32,
    name: String,
    exit: watch::Receiver<Option<ExitStatus>>,
    waiter: JoinHandle<()>,
    stderr_task: Option<JoinHandle<()>>,
    /// The task that discards stdout once the connection stopped reading it.
    stdout_drain: Arc<Mutex<DrainSlot>>,
    stdin_close_grace: Duration,
    term_grace: Duration,
    /// Cleared once shutdown has found the process group empty, so that `Drop`
    /// sends no signal to a group id the system may have given to someone else.
    group_may_live: bool,
    /// Asks the waiter to kill the child, where there are no process groups.
    #[cfg(not(unix))]
    kill: Option<tokio::sync::oneshot::Sender<()>>,
}

impl ServerProcess {
    /// The server's process id. On Unix it is also the id of its process group.
    pub fn id(&self) -> u32 {
        self.pid
    }

    /// The server's name in logs.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// A watch of the server's exit status: `None` while it runs, then the status.
    ///
    /// If the sender is dropped while the value is still `None`, the status will
    /// never be known: waiting for the child failed, or this handle was dropped
    /// (which killed the child). [`ExitAwareReader::new`](crate::ExitAwareReader::new) takes this.
    pub fn exit_watch(&self) -> watch::Receiver<Option<ExitStatus>> {
        self.exit.clone()
    }

    /// The server's exit status, if it has exited. Never blocks.
    pub fn try_status(&self) -> Option<ExitStatus> {
        *self.exit.borrow()
    }

    /// Resolves when the server has exited, with its status; with `None` if the
    /// status can never be known (see [`exit_watch`](Self::exit_watch)).
    ///
    /// The future does not borrow the handle, so it can be raced against reads
    /// and writes. Cancel safe.
    pub fn exited(&self) -> impl Future<Output = Option<ExitStatus>> + Send + 'static {
        let mut exit = self.exit.clone();
        async move { wait_exit(&mut exit).await }
    }

    /// Stops the server as the spec's shutdown section says
    /// (<https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/stdio>), and returns its exit status.
    ///
    /// 1. Drops `stdin`, closing the server's input. Pass it here if you still
    ///    hold it; if a writer owns it, close or drop the writer first and pass
    ///    `None`. Until every handle on the pipe is closed the server sees no end
    ///    of file, and only the signals below will stop it.
    /// 2. Waits up to the command's `stdin_close_grace` (default 2 s) for the
    ///    server to exit.
    /// 3. Sends SIGTERM to its process group and waits up to `term_grace`
    ///    (default 3 s).
    /// 4. Sends SIGKILL to the process group and reaps the server.
    ///
    /// All along, the server's stdout keeps a reader: a server may still write
    /// (a last log line, a reply to a request it was working on) after its stdin
    /// closes, and with nobody reading it would block on a full pipe or, once the
    /// read end is closed, die of `SIGPIPE`/`EPIPE` instead of exiting cleanly. A
    /// stdout wrapped by [`connect`](crate::connect) is handed, when the
    /// connection's reader is dropped, to a task that reads and discards it (a
    /// fixed 16 KiB buffer, nothing kept) until end of file or the end of this
    /// shutdown. A caller holding the raw `stdout` of a [`SpawnedServer`] should
    /// likewise keep reading it until this returns.
    ///
    /// Whichever step the server exits at, processes it leaves behind in its
    /// group get SIGTERM and, if they outlive `term_grace`, SIGKILL, so no
    /// grandchild is orphaned. (Those are not our children, so shutdown polls for
    /// them every 10 ms; a zombie still counts until init reaps it.) Then the
    /// stderr reader and the stdout drain are given 100 ms to reach end of file,
    /// and are stopped. The whole sequence is bounded by the two graces, the
    /// reaping limit after SIGKILL and those 100 ms.
    ///
    /// Cancel safety: dropping the future drops the handle, which kills the
    /// process group with SIGKILL at once.
    pub async fn shutdown(mut self, stdin: Option<ChildStdin>) -> Result<ExitStatus, ProcessError> {
        drop(stdin);
        let mut exit = self.exit.clone();
        let mut signalled = false;
        let mut status = wait_exit_within(&mut exit, self.stdin_close_grace).await;
        if status.is_none() {
            tracing::debug!(server = %self.name, pid = self.pid, "stdin closed, sending SIGTERM");
            self.escalate(Escalation::Terminate)?;
            signalled = true;
            status = wait_exit_within(&mut exit, self.term_grace).await;
        }
        if status.is_none() {
            tracing::warn!(server = %self.name, pid = self.pid, "SIGTERM ignored, sending SIGKILL");
            self.escalate(Escalation::Kill)?;
            status = wait_exit_within(&mut exit, REAP_LIMIT).await;
        }
        let Some(status) = status else {
            return Err(ProcessError::NotReaped {
                pid: self.pid,
                waited: REAP_LIMIT,
            });
        };
        self.clear_group(signalled).await?;
        self.group_may_live = false;
        let stdout_drain = lock(&self.stdout_drain).close();
        let deadline = tokio::time::Instant::now() + STDERR_JOIN_LIMIT;
        for mut task in [self.stderr_task.take(), stdout_drain]
            .into_iter()
            .flatten()
        {
            if tokio::time::timeout_at(deadline, &mut task).await.is_err() {
                task.abort();
            }
        }
        tracing::debug!(server = %self.name, pid = self.pid, ?status, "MCP server shut down");
        status.ok_or(ProcessError::StatusUnavailable { pid: self.pid })
    }

    /// Ends whatever is left in the server's process group after the server
    /// itself exited: SIGTERM, up to `term_grace` to go, then SIGKILL.
    #[cfg(unix)]
    async fn clear_group(&self, mut signalled: bool) -> Result<(), ProcessError> {
        let deadline = tokio::time::Instant::now() + self.term_grace;
        while group::is_alive(self.pid) {
            if !signalled {
                tracing::debug!(server = %self.name, "processes left behind, sending SIGTERM");
                self.escalate(Escalation::Terminate)?;
                signalled = true;
            } else if tokio::time::Instant::now() >= deadline {
                tracing::warn!(server = %self.name, "processes left behind, sending SIGKILL");
                return self.escalate(Escalation::Kill);
            }
            tokio::time::sleep(GROUP_POLL_INTERVAL).await;
        }
        Ok(())
    }

    #[cfg(not(unix))]
    #[allow(clippy::unused_async)]
    async fn clear_group(&self, _signalled: bool) -> Result<(), ProcessError> {
        Ok(())
    }

    /// Sends SIGTERM or SIGKILL to the server's process group.
    #[cfg(unix)]
    fn escalate(&self, step: Escalation) -> Result<(), ProcessError> {
        let signal = match step {
            Escalation::Terminate => nix::sys::signal::Signal::SIGTERM,
            Escalation::Kill => nix::sys::signal::Signal::SIGKILL,
        };
        group::signal(self.pid, signal).map_err(|source| ProcessError::Signal {
            pid: self.pid,
            source,
        })
    }

    /// Without process groups or SIGTERM, only the kill step does anything: it
    /// asks the waiter to kill the child.
    #[cfg(not(unix))]
    #[allow(clippy::unnecessary_wraps)]
    fn escalate(&mut self, step: Escalation) -> Result<(), ProcessError> {
        if let (Escalation::Kill, Some(kill)) = (step, self.kill.take()) {
            let _ = kill.send(());
        }
        Ok(())
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        #[cfg(unix)]
        if self.group_may_live {
            // Best effort and non-blocking. If the group is already empty this
            // fails with ESRCH. The group id cannot be reused while any process
            // is in the group, so this reaches only our server's processes unless
            // the group emptied and the pid space wrapped around since.
            let _ = group::signal(self.pid, nix::sys::signal::Signal::SIGKILL);
        }
        // Aborting the waiter drops the `Child`, whose `kill_on_drop` kills a
        // server that is still running; Tokio reaps it in the background.
        self.waiter.abort();
        if let Some(task) = &self.stderr_task {
            task.abort();
        }
        if let Some(task) = lock(&self.stdout_drain).close() {
            task.abort();
        }
    }
}

impl ServerProcess {
    /// Wraps the server's `stdout` so that, when the wrapper is dropped while this
    /// handle lives, a task takes the pipe over and reads and discards it until
    /// end of file or until [`shutdown`](Self::shutdown) ends (or this handle is
    /// dropped). The connection's reader is dropped when the connection stops,
    /// before the server is asked to exit; without this, whatever the server
    /// writes from then on would meet a pipe nobody reads.
    pub(crate) fn drained_stdout(&self, stdout: ChildStdout) -> DrainedStdout {
        DrainedStdout {
            pipe: Some(stdout),
            slot: Arc::clone(&self.stdout_drain),
            server: self.name.clone(),
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Where a [`DrainedStdout`] puts its drain task, shared with the [`ServerProcess`].
#[derive(Debug, Default)]
struct DrainSlot {
    /// The process handle is done with the server: no drain may start any more.
    closed: bool,
    task: Option<JoinHandle<()>>,
}

impl DrainSlot {
    /// Forbids later drains, and hands back the running one, if any.
    fn close(&mut self) -> Option<JoinHandle<()>> {
        self.closed = true;
        self.task.take()
    }
}

/// A server's stdout that, when dropped, is handed to a task that reads and
/// discards it, so that the server never writes into a pipe nobody reads while
/// it is being shut down. Reads pass straight through to the pipe.
#[derive(Debug)]
pub(crate) struct DrainedStdout {
    pipe: Option<ChildStdout>,
    slot: Arc<Mutex<DrainSlot>>,
    server: String,
}

impl AsyncRead for DrainedStdout {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.pipe.as_mut() {
            Some(pipe) => Pin::new(pipe).poll_read(cx, buf),
            None => Poll::Ready(Ok(())),
        }
    }
}

impl Drop for DrainedStdout {
    fn drop(&mut self) {
        let Some(pipe) = self.pipe.take() else {
            return;
        };
        let mut slot = lock(&self.slot);
        // Once the process handle is done, the server and its group are gone or
        // being killed: dropping the pipe is all that is left to do. Outside a
        // runtime there is nowhere to run the drain, and dropping is all we can do.
        if slot.closed {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        if let Some(old) = slot.task.take() {
            old.abort();
        }
        slot.task = Some(runtime.spawn(discard_stdout(pipe, self.server.clone())));
    }
}

/// The stdout drain task: reads the pipe to its end and throws every byte away.
async fn discard_stdout(mut pipe: ChildStdout, server: String) {
    let mut buf = vec![0; STDOUT_DRAIN_CHUNK];
    let mut discarded = 0_u64;
    loop {
        match pipe.read(&mut buf).await {
            Ok(0) => break,
            Ok(n) => discarded += n as u64,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => {
                tracing::debug!(%server, %error, "reading the MCP server's stdout failed");
                break;
            }
        }
    }
    if discarded > 0 {
        tracing::debug!(%server, discarded, "discarded the MCP server's stdout after the connection ended");
    }
}

/// A step of forced termination.
#[derive(Clone, Copy, Debug)]
enum Escalation {
    Terminate,
    Kill,
}

/// Signals to a whole process group.
#[cfg(unix)]
mod group {
    use std::io;

    use nix::errno::Errno;
    use nix::sys::signal::{Signal, killpg};
    use nix::unistd::Pid;

    /// Sends `signal` to process group `pgid`. A group that no longer exists is
    /// not an error: there is nothing left to signal.
    pub(super) fn signal(pgid: u32, signal: Signal) -> io::Result<()> {
        let Ok(pgid) = i32::try_from(pgid) else {
            return Err(io::Error::from(Errno::EINVAL));
        };
        match killpg(Pid::from_raw(pgid), signal) {
            Ok(()) | Err(Errno::ESRCH) => Ok(()),
            Err(errno) => Err(errno.into()),
        }
    }

    /// Whether any process, zombies included, is left in group `pgid` that we
    /// may signal.
    pub(super) fn is_alive(pgid: u32) -> bool {
        i32::try_from(pgid).is_ok_and(|pgid| killpg(Pid::from_raw(pgid), None).is_ok())
    }
}

/// The waiter task: reaps the child and publishes its status.
async fn wait_child(
    mut child: Child,
    exit: watch::Sender<Option<ExitStatus>>,
    #[cfg(not(unix))] kill: tokio::sync::oneshot::Receiver<()>,
) {
    #[cfg(unix)]
    let waited = child.wait().await;
    #[cfg(not(unix))]
    let waited = tokio::select! {
        waited = child.wait() => waited,
        Ok(()) = kill => {
            let _ = child.start_kill();
            child.wait().await
        }
    };
    match waited {
        Ok(status) => {
            exit.send_replace(Some(status));
        }
        // Dropping the sender with `None` tells every watcher the status is lost.
        Err(error) => tracing::warn!(%error, "waiting for the MCP server process failed"),
    }
}

/// Waits until the watch holds a status. `None` means the sender went away
/// first, so the status will never be known; the process is gone or being killed.
pub(crate) async fn wait_exit(
    exit: &mut watch::Receiver<Option<ExitStatus>>,
) -> Option<ExitStatus> {
    match exit.wait_for(Option::is_some).await {
        Ok(status) => *status,
        Err(_) => None,
    }
}

/// Waits up to `limit` for the process to exit. The outer `None` means it is
/// still running; the inner one that its status is unknown.
pub(crate) async fn wait_exit_within(
    exit: &mut watch::Receiver<Option<ExitStatus>>,
    limit: Duration,
) -> Option<Option<ExitStatus>> {
    timeout(limit, wait_exit(exit)).await.ok()
}

/// Where forwarded stderr lines go.
enum StderrSink {
    Tracing,
    Callback(Arc<dyn Fn(&str) + Send + Sync>),
    /// The callback panicked; lines are read and dropped.
    Dropped,
}

impl StderrSink {
    fn emit(&mut self, server: &str, line: &[u8], truncated: bool) {
        let line = match line {
            [rest @ .., b'\r'] if !truncated => rest,
            _ => line,
        };
        let text = String::from_utf8_lossy(line);
        match self {
            StderrSink::Tracing => {
                tracing::info!(target: STDERR_TARGET, server, truncated, "{text}");
            }
            StderrSink::Callback(f) => {
                if catch_unwind(AssertUnwindSafe(|| f(&text))).is_err() {
                    tracing::error!(
                        server,
                        "stderr callback panicked; dropping the rest of the server's stderr"
                    );
                    *self = StderrSink::Dropped;
                }
            }
            StderrSink::Dropped => {}
        }
    }
}

/// The stderr reader task: reads the pipe to its end, whatever the sink does,
/// so the child never blocks on a full stderr pipe.
async fn forward_stderr(mut pipe: ChildStderr, mut sink: StderrSink, server: String) {
    let mut buf = vec![0; STDERR_READ_CHUNK];
    let mut lines = LineLimiter::default();
    let mut emit = |line: &[u8], truncated| sink.emit(&server, line, truncated);
    loop {
        match pipe.read(&mut buf).await {
            Ok(0) => break,
            Ok(n) => lines.feed(&buf[..n], &mut emit),
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => {
                tracing::debug!(%error, "reading the MCP server's stderr failed");
                break;
            }
        }
    }
    lines.finish(&mut emit);
}

/// Cuts a byte stream into lines of at most [`STDERR_LINE_LIMIT`] bytes, without
/// line endings. The head of an over-long line is emitted (marked truncated) as
/// soon as the limit is reached, and the rest is skipped up to the next newline.
#[derive(Default)]
struct LineLimiter {
    line: Vec<u8>,
    skipping: bool,
}

impl LineLimiter {
    fn feed(&mut self, mut bytes: &[u8], emit: &mut impl FnMut(&[u8], bool)) {
        while !bytes.is_empty() {
            let (part, ends_line) = match memchr::memchr(b'\n', bytes) {
                Some(i) => {
                    let part = &bytes[..i];
                    bytes = &bytes[i + 1..];
                    (part, true)
                }
                None => (std::mem::take(&mut bytes), false),
            };
            if !self.skipping {
                let room = STDERR_LINE_LIMIT - self.line.len();
                if part.len() > room {
                    self.line.extend_from_slice(&part[..room]);
                    emit(&self.line, true);
                    self.line.clear();
                    self.skipping = true;
                } else {
                    self.line.extend_from_slice(part);
                }
            }
            if ends_line {
                if !self.skipping {
                    emit(&self.line, false);
                }
                self.line.clear();
                self.skipping = false;
            }
        }
    }

    /// Emits an unterminated last line at end of file.
    fn finish(&mut self, emit: &mut impl FnMut(&[u8], bool)) {
        if !self.skipping && !self.line.is_empty() {
            emit(&self.line, false);
        }
        self.line.clear();
        self.skipping = false;
    }
}

#[cfg(test)]
mod tests {
    use super::{LineLimiter, STDERR_LINE_LIMIT};

    /// The reads of a pipe, and the lines they should yield as (bytes, truncated).
    type Case<'a> = (&'a [&'a [u8]], &'a [(&'a [u8], bool)]);

    /// Feeds `chunks` (the reads of the pipe) to a `LineLimiter`, then end of
    /// file, and compares the emitted lines with `expected` as (length or text,
    /// truncated).
    fn check(chunks: &[&[u8]], expected: &[(&[u8], bool)]) {
        let mut limiter = LineLimiter::default();
        let mut lines = Vec::new();
        let mut emit = |line: &[u8], truncated| lines.push((line.to_vec(), truncated));
        for chunk in chunks {
            limiter.feed(chunk, &mut emit);
        }
        limiter.finish(&mut emit);
        let expected: Vec<_> = expected.iter().map(|(l, t)| (l.to_vec(), *t)).collect();
        assert_eq!(lines, expected, "chunks {chunks:?}");
        assert!(limiter.line.capacity() <= STDERR_LINE_LIMIT.next_power_of_two());
    }

    #[test]
    fn splits_and_bounds_lines() {
        let limit = vec![b'a'; STDERR_LINE_LIMIT];
        let over = vec![b'b'; STDERR_LINE_LIMIT + 1];
        let huge = vec![b'c'; 3 * STDERR_LINE_LIMIT];
        let b_head = &over[..STDERR_LINE_LIMIT];
        let c_head = &huge[..STDERR_LINE_LIMIT];
        let cases: &[Case<'_>] = &[
            (&[b"one\ntwo\n"], &[(b"one", false), (b"two", false)]),
            (
                &[b"sp", b"lit\n", b"\n"],
                &[(b"split", false), (b"", false)],
            ),
            (&[b"no newline at end"], &[(b"no newline at end", false)]),
            (&[b"crlf\r\n"], &[(b"crlf\r", false)]),
            (&[&limit, b"\nnext\n"], &[(&limit, false), (b"next", false)]),
            (&[&limit, b"\n"], &[(&limit, false)]),
            (&[&over, b"\nafter\n"], &[(b_head, true), (b"after", false)]),
            (
                &[&huge, &huge, b"tail\nafter"],
                &[(c_head, true), (b"after", false)],
            ),
            (&[&huge], &[(c_head, true)]),
            (
                &[&limit, b"x", b"yz\nok\n"],
                &[(&limit, true), (b"ok", false)],
            ),
        ];
        for (chunks, expected) in cases {
            check(chunks, expected);
        }
    }
}
