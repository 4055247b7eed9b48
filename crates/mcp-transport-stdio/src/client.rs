//! A connection to a server process: spawn it, run the engine over its pipes, stop it.
//!
//! <https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/stdio>: the client launches the server as a
//! subprocess, writes messages to its stdin and reads them from its stdout, one per line;
//! to stop it, the client closes the server's stdin, waits for it to exit (reading and
//! discarding its stdout meanwhile), then sends SIGTERM and, if need be, SIGKILL.

use std::process::ExitStatus;
use std::time::Duration;

use mcp_jsonrpc::{Connection, Handler, Peer, PeerConfig};
use tokio::process::{ChildStdin, ChildStdout};

use crate::exit_aware::{ExitAwareReader, ExitAwareWriter};
use crate::framing::{LineReader, LineWriter};
use crate::process::{ProcessError, ServerCommand, ServerProcess};

/// The engine settings a client uses over stdio: cancellation by `notifications/cancelled`,
/// and lines a misbehaving server prints to stdout that are not messages are logged and
/// skipped, never answered.
pub fn client_config() -> PeerConfig {
    let mut config = PeerConfig::default();
    config.cancel_notifications = true;
    config.reply_to_malformed = false;
    config
}

/// A running server process and the connection over its pipes.
#[derive(Debug)]
pub struct ServerConnection {
    connection: Connection,
    process: ServerProcess,
}

/// Spawns `command` and starts the engine over its stdin and stdout.
///
/// Requests made through the returned [`Peer`] fail at once with
/// [`mcp_jsonrpc::Error::Closed`] (naming the exit status) if the server exits, so a crash
/// is never mistaken for a server's error response, and never waited out as a timeout.
///
/// ```
/// # #[cfg(unix)]
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use mcp_jsonrpc::{NoHandler, RequestOptions};
/// use mcp_transport_stdio::{ServerCommand, client_config, connect};
///
/// // `cat` echoes our request back, which the engine reads as a request *to* us: we
/// // answer it with "method not found", and `cat` echoes that back as the answer.
/// let (peer, server) = connect(&ServerCommand::new("/bin/cat"), NoHandler, client_config())?;
/// let err = peer.request("ping", None::<&()>, RequestOptions::default()).await.unwrap_err();
/// assert_eq!(err.remote().unwrap().code, mcp_types::ErrorCode::METHOD_NOT_FOUND);
/// let status = server.shutdown(std::time::Duration::from_secs(1)).await?;
/// assert!(status.success());
/// # Ok::<(), mcp_transport_stdio::ProcessError>(())
/// # }).unwrap();
/// ```
pub fn connect<H: Handler>(
    command: &ServerCommand,
    handler: H,
    config: PeerConfig,
) -> Result<(Peer, ServerConnection), ProcessError> {
    let spawned = command.spawn()?;
    let (peer, connection) = connect_pipes(
        spawned.stdin,
        spawned.stdout,
        &spawned.process,
        handler,
        config,
    );
    Ok((
        peer,
        ServerConnection {
            connection,
            process: spawned.process,
        },
    ))
}

fn connect_pipes<H: Handler>(
    stdin: ChildStdin,
    stdout: ChildStdout,
    process: &ServerProcess,
    handler: H,
    config: PeerConfig,
) -> (Peer, Connection) {
    // The engine drops its reader when the connection stops, before the server is asked
    // to exit; the wrapper then hands stdout to a drain, so that what the server writes
    // while it shuts down meets a reader rather than a closed pipe (EPIPE).
    let reader = ExitAwareReader::new(
        LineReader::new(process.drained_stdout(stdout)),
        process.exit_watch(),
    );
    let writer = ExitAwareWriter::new(LineWriter::new(stdin), process.exit_watch());
    Peer::connect(reader, writer, handler, config)
}

impl ServerConnection {
    /// The server process.
    pub fn process(&self) -> &ServerProcess {
        &self.process
    }

    /// Stops the connection and the server, as the spec says: in-flight requests from the
    /// server get `grace` to finish, our pending requests fail, the server's stdin closes,
    /// and the process (its whole group) is given the command's graces before SIGTERM and
    /// SIGKILL (see [`ServerProcess::shutdown`]). Until the server has exited, its stdout
    /// is still read, and discarded, so that a server writing as it shuts down neither
    /// blocks nor gets `EPIPE`. Returns how the server exited.
    pub async fn shutdown(self, grace: Duration) -> Result<ExitStatus, ProcessError> {
        // The engine's writer owns the server's stdin; when the connection ends it drops it,
        // which closes the pipe. Its reader of stdout is dropped too, and the drain takes
        // the pipe over until the process shutdown ends.
        self.connection.shutdown(grace).await;
        self.process.shutdown(None).await
    }
}
