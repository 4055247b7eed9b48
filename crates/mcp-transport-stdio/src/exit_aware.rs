//! Frame readers and writers over a child server's pipes that know when it exits: a
//! crash is reported with the server's exit status whichever half of the connection sees
//! it first, and a grandchild that inherited stdout cannot keep the client waiting for
//! ever.

use std::io;
use std::process::ExitStatus;
use std::time::Duration;

use bytes::Bytes;
use mcp_jsonrpc::{FrameReader, FrameWriter, TransportError, WriteNow};
use tokio::sync::watch;
use tokio::time::timeout;

use crate::process::{DEFAULT_DRAIN_GRACE, wait_exit, wait_exit_within};

/// A frame reader over a server's stdout that ends when the server exits.
///
/// A server's stdout reaches end of file only when every process holding it has
/// closed it, and a grandchild that inherited it may hold it for ever. This
/// wrapper watches the exit status too. Once the server has exited, frames
/// already written are still delivered: each read waits up to the drain grace
/// (default [`DEFAULT_DRAIN_GRACE`]) for the next frame. When a read finds none in
/// time, or the pipe reaches end of file, `read_frame` returns
/// `Some(Err(TransportError::Closed(Some("server process exited with <status>"))))`
/// once, and `None` from then on.
///
/// End of file while the server still runs (it closed its stdout, which the spec
/// allows as the start of a server-initiated shutdown) waits up to the drain
/// grace for it to exit and reports the exit the same way; if it is still
/// running, `read_frame` returns `None`. An error that ends the stream is passed
/// through, and `None` follows it.
///
/// A pending read of the inner reader is dropped only when this reader gives up
/// for good, so the inner reader need not be cancel safe. Dropping the future of
/// [`read_frame`](FrameReader::read_frame) drops the inner read, as dropping the
/// inner reader's own future would.
#[derive(Debug)]
pub struct ExitAwareReader<R> {
    inner: R,
    exit: watch::Receiver<Option<ExitStatus>>,
    drain_grace: Duration,
    state: ReadState,
}

#[derive(Clone, Copy, Debug)]
enum ReadState {
    /// The server has not been seen to exit.
    Running,
    /// The server exited (with this status, if known); draining what is left.
    Exited(Option<ExitStatus>),
    /// The end was reported; every read returns `None`.
    Done,
}

impl<R: FrameReader> ExitAwareReader<R> {
    /// Wraps `inner`, a reader of the server's stdout, with the server's exit
    /// watch from [`ServerProcess::exit_watch`](crate::ServerProcess::exit_watch).
    pub fn new(inner: R, exit: watch::Receiver<Option<ExitStatus>>) -> Self {
        ExitAwareReader {
            inner,
            exit,
            drain_grace: DEFAULT_DRAIN_GRACE,
            state: ReadState::Running,
        }
    }

    /// Sets how long each read waits for more output once the server has exited.
    #[must_use]
    pub fn with_drain_grace(mut self, grace: Duration) -> Self {
        self.drain_grace = grace;
        self
    }

    /// The wrapped reader.
    pub fn get_ref(&self) -> &R {
        &self.inner
    }
}

impl<R: FrameReader> FrameReader for ExitAwareReader<R> {
    async fn read_frame(&mut self) -> Option<Result<Bytes, TransportError>> {
        let ExitAwareReader {
            inner,
            exit,
            drain_grace,
            state,
        } = self;
        let grace = *drain_grace;
        if let ReadState::Done = state {
            return None;
        }
        let read = inner.read_frame();
        tokio::pin!(read);
        if let ReadState::Running = state {
            // `Ok` carries what the inner reader returned, `Err` the exit status.
            let first = tokio::select! {
                biased;
                frame = &mut read => Ok(frame),
                status = wait_exit(exit) => Err(status),
            };
            match first {
                Ok(None) => {
                    *state = ReadState::Done;
                    let status = wait_exit_within(exit, grace).await;
                    return status.map(|status| Err(exited(status)));
                }
                Ok(Some(frame)) => return Some(pass_through(state, frame)),
                Err(status) => *state = ReadState::Exited(status),
            }
        }
        let ReadState::Exited(status) = *state else {
            return None;
        };
        if let Ok(Some(frame)) = timeout(grace, &mut read).await {
            return Some(pass_through(state, frame));
        }
        *state = ReadState::Done;
        Some(Err(exited(status)))
    }
}

/// Returns a frame or error from the inner reader, ending the stream after an
/// error that ends the connection.
fn pass_through(
    state: &mut ReadState,
    frame: Result<Bytes, TransportError>,
) -> Result<Bytes, TransportError> {
    if frame.as_ref().is_err_and(|e| !e.is_recoverable()) {
        *state = ReadState::Done;
    }
    frame
}

/// A frame writer over a server's stdin that names how the server ended when a write
/// fails because it exited.
///
/// A write to a server that has exited fails with a broken pipe, which says nothing of
/// why. When a write or a flush fails with an I/O error, this wrapper waits up to the
/// drain grace (default [`DEFAULT_DRAIN_GRACE`]) for the server's exit and, if it
/// exited, reports `TransportError::Closed(Some("server process exited with <status>"))`
/// instead, as [`ExitAwareReader`] does: a crash is named the same way whichever half of
/// the connection sees it first. Other errors pass through unchanged.
#[derive(Debug)]
pub struct ExitAwareWriter<W> {
    inner: W,
    exit: watch::Receiver<Option<ExitStatus>>,
    drain_grace: Duration,
}

impl<W: FrameWriter> ExitAwareWriter<W> {
    /// Wraps `inner`, a writer of the server's stdin, with the server's exit watch from
    /// [`ServerProcess::exit_watch`](crate::ServerProcess::exit_watch).
    pub fn new(inner: W, exit: watch::Receiver<Option<ExitStatus>>) -> Self {
        ExitAwareWriter {
            inner,
            exit,
            drain_grace: DEFAULT_DRAIN_GRACE,
        }
    }

    /// Sets how long a failed write waits to learn whether the server exited.
    #[must_use]
    pub fn with_drain_grace(mut self, grace: Duration) -> Self {
        self.drain_grace = grace;
        self
    }

    /// `result`, or, for an I/O error while the server exits, how it exited.
    async fn explain(&mut self, result: Result<(), TransportError>) -> Result<(), TransportError> {
        match result {
            Err(TransportError::Io(e)) if e.kind() != io::ErrorKind::InvalidInput => {
                match wait_exit_within(&mut self.exit, self.drain_grace).await {
                    Some(status) => Err(exited(status)),
                    None => Err(TransportError::Io(e)),
                }
            }
            other => other,
        }
    }
}

impl<W: FrameWriter> FrameWriter for ExitAwareWriter<W> {
    async fn write_frame(&mut self, frame: Bytes) -> Result<(), TransportError> {
        let result = self.inner.write_frame(frame).await;
        self.explain(result).await
    }

    async fn write_frame_parts(&mut self, parts: [Bytes; 3]) -> Result<(), TransportError> {
        let result = self.inner.write_frame_parts(parts).await;
        self.explain(result).await
    }

    fn write_now(&mut self, frame: &[u8]) -> WriteNow {
        self.inner.write_now(frame)
    }

    async fn flush(&mut self) -> Result<(), TransportError> {
        let result = self.inner.flush().await;
        self.explain(result).await
    }

    async fn close(&mut self) -> Result<(), TransportError> {
        self.inner.close().await
    }
}

/// The error that ends the stream of a server that exited.
fn exited(status: Option<ExitStatus>) -> TransportError {
    TransportError::Closed(Some(match status {
        Some(status) => format!("server process exited with {status}"),
        None => "server process exited (exit status unknown)".to_owned(),
    }))
}

#[cfg(all(test, unix))]
mod writer_tests {
    use std::io;
    use std::os::unix::process::ExitStatusExt as _;
    use std::process::ExitStatus;
    use std::time::Duration;

    use bytes::Bytes;
    use mcp_jsonrpc::{FrameWriter, TransportError};
    use tokio::sync::watch;

    use super::ExitAwareWriter;

    /// A writer whose every write and flush fails with `kind`.
    struct Failing(io::ErrorKind);

    impl FrameWriter for Failing {
        async fn write_frame(&mut self, _frame: Bytes) -> Result<(), TransportError> {
            Err(TransportError::Io(io::Error::from(self.0)))
        }

        async fn flush(&mut self) -> Result<(), TransportError> {
            Err(TransportError::Io(io::Error::from(self.0)))
        }

        async fn close(&mut self) -> Result<(), TransportError> {
            Ok(())
        }
    }

    fn failing(
        kind: io::ErrorKind,
    ) -> (ExitAwareWriter<Failing>, watch::Sender<Option<ExitStatus>>) {
        let (exit, watch) = watch::channel(None);
        (ExitAwareWriter::new(Failing(kind), watch), exit)
    }

    #[tokio::test(start_paused = true)]
    async fn a_broken_pipe_names_the_exit_that_comes_within_the_grace() {
        let (mut writer, exit) = failing(io::ErrorKind::BrokenPipe);
        // The exit becomes known a little after the failed write, as it does when the
        // write loses the race with the process's reaper.
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            exit.send_replace(Some(ExitStatus::from_raw(3 << 8)));
        });
        let err = writer
            .write_frame(Bytes::from_static(b"{}"))
            .await
            .unwrap_err();
        assert!(
            matches!(&err, TransportError::Closed(Some(reason)) if reason.contains("exit status: 3")),
            "{err}"
        );
        let err = writer.flush().await.unwrap_err();
        assert!(err.to_string().contains("exit status: 3"), "{err}");
    }

    #[tokio::test(start_paused = true)]
    async fn without_an_exit_within_the_grace_the_write_error_stands() {
        let (mut writer, _exit) = failing(io::ErrorKind::BrokenPipe);
        let err = writer.flush().await.unwrap_err();
        assert!(
            matches!(&err, TransportError::Io(e) if e.kind() == io::ErrorKind::BrokenPipe),
            "{err}"
        );
        // A frame the transport refused is the caller's error: it never waits for an exit.
        let (mut writer, exit) = failing(io::ErrorKind::InvalidInput);
        exit.send_replace(Some(ExitStatus::from_raw(0)));
        let err = writer
            .write_frame(Bytes::from_static(b"{}"))
            .await
            .unwrap_err();
        assert!(
            matches!(&err, TransportError::Io(e) if e.kind() == io::ErrorKind::InvalidInput),
            "{err}"
        );
    }
}
