//! This process's standard input and output as async streams, without a thread hop.
//!
//! `tokio::io::stdin()` and `stdout()` run every read and write on tokio's blocking
//! thread pool: each one is a hand-off to another thread and back, and each write is first
//! copied into std's line-buffered stdout. A stdio server spends most of its time there.
//! When standard input or output is a pipe, which is
//! how every MCP client launches a server (<https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/stdio>),
//! these streams drive it in non-blocking mode on the runtime's reactor instead, like any
//! socket. Anything else (a file, a terminal, a socket) keeps tokio's blocking streams.
//!
//! Non-blocking mode belongs to the open file description, which every process holding
//! the same pipe end shares. So standard output stays blocking when standard error is the
//! same pipe (`2>&1`): a logger writing to stderr must never see `EAGAIN`. Writing to
//! stdout by other means (a stray `println!`) is already forbidden by the spec; in
//! non-blocking mode it can also fail when the pipe is full.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// This process's standard input: a non-blocking pipe on the reactor when it is one,
/// tokio's [`Stdin`](tokio::io::Stdin) otherwise.
#[derive(Debug)]
pub struct StdinStream(StdinKind);

#[derive(Debug)]
enum StdinKind {
    #[cfg(unix)]
    Pipe(tokio::net::unix::pipe::Receiver),
    Blocking(tokio::io::Stdin),
}

/// This process's standard output: a non-blocking pipe on the reactor when it is one and
/// standard error is not the same pipe, tokio's [`Stdout`](tokio::io::Stdout) otherwise.
#[derive(Debug)]
pub struct StdoutStream(StdoutKind);

#[derive(Debug)]
enum StdoutKind {
    #[cfg(unix)]
    Pipe(tokio::net::unix::pipe::Sender),
    Blocking(tokio::io::Stdout),
}

impl StdinStream {
    /// Opens standard input. Must be called within a tokio runtime with IO enabled.
    pub fn open() -> Self {
        #[cfg(unix)]
        if let Some(pipe) = unix::stdin_pipe() {
            return StdinStream(StdinKind::Pipe(pipe));
        }
        StdinStream(StdinKind::Blocking(tokio::io::stdin()))
    }

    /// Whether standard input is driven as a non-blocking pipe.
    pub fn is_pipe(&self) -> bool {
        !matches!(self.0, StdinKind::Blocking(_))
    }
}

impl StdoutStream {
    /// Opens standard output. Must be called within a tokio runtime with IO enabled.
    pub fn open() -> Self {
        #[cfg(unix)]
        if let Some(pipe) = unix::stdout_pipe() {
            return StdoutStream(StdoutKind::Pipe(pipe));
        }
        StdoutStream(StdoutKind::Blocking(tokio::io::stdout()))
    }

    /// Whether standard output is driven as a non-blocking pipe.
    pub fn is_pipe(&self) -> bool {
        !matches!(self.0, StdoutKind::Blocking(_))
    }
}

impl AsyncRead for StdinStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match &mut self.get_mut().0 {
            #[cfg(unix)]
            StdinKind::Pipe(pipe) => Pin::new(pipe).poll_read(cx, buf),
            StdinKind::Blocking(stdin) => Pin::new(stdin).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for StdoutStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match &mut self.get_mut().0 {
            #[cfg(unix)]
            StdoutKind::Pipe(pipe) => Pin::new(pipe).poll_write(cx, buf),
            StdoutKind::Blocking(stdout) => Pin::new(stdout).poll_write(cx, buf),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match &mut self.get_mut().0 {
            #[cfg(unix)]
            StdoutKind::Pipe(pipe) => Pin::new(pipe).poll_write_vectored(cx, bufs),
            StdoutKind::Blocking(stdout) => Pin::new(stdout).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match &self.0 {
            #[cfg(unix)]
            StdoutKind::Pipe(pipe) => pipe.is_write_vectored(),
            StdoutKind::Blocking(stdout) => stdout.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().0 {
            #[cfg(unix)]
            StdoutKind::Pipe(pipe) => Pin::new(pipe).poll_flush(cx),
            StdoutKind::Blocking(stdout) => Pin::new(stdout).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().0 {
            #[cfg(unix)]
            StdoutKind::Pipe(pipe) => Pin::new(pipe).poll_shutdown(cx),
            StdoutKind::Blocking(stdout) => Pin::new(stdout).poll_shutdown(cx),
        }
    }
}

#[cfg(unix)]
mod unix {
    use std::fs::File;
    use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
    use std::os::unix::fs::MetadataExt;

    use tokio::net::unix::pipe;

    /// A duplicate of `fd` (the same open file description), or `None` if `dup` fails.
    fn duplicate(fd: BorrowedFd<'_>) -> Option<File> {
        fd.try_clone_to_owned()
            .ok()
            .map(|fd: OwnedFd| File::from(fd))
    }

    /// Standard input as a reactor-driven pipe, if it is a pipe (`from_file` checks that
    /// it is a FIFO opened for reading, then sets `O_NONBLOCK`).
    pub(super) fn stdin_pipe() -> Option<pipe::Receiver> {
        let file = duplicate(std::io::stdin().as_fd())?;
        pipe::Receiver::from_file(file).ok()
    }

    /// Standard output as a reactor-driven pipe, if it is a pipe that standard error does
    /// not share.
    pub(super) fn stdout_pipe() -> Option<pipe::Sender> {
        let file = duplicate(std::io::stdout().as_fd())?;
        let out = file.metadata().ok()?;
        let shared_with_stderr = duplicate(std::io::stderr().as_fd())
            .and_then(|err| err.metadata().ok())
            .is_some_and(|err| err.dev() == out.dev() && err.ino() == out.ino());
        if shared_with_stderr {
            return None;
        }
        pipe::Sender::from_file(file).ok()
    }
}
