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
//!
//! On Linux, standard output's pipe is also made larger (up to [`STDOUT_PIPE_SIZE`]
//! bytes, where the system allows it). A pipe holds 64 KiB by default, so a large reply
//! (a page of hundreds of tools is hundreds of kilobytes) went out in pieces, with a wait
//! for the reader after each. The kernel allocates a pipe's pages only for bytes written
//! and not yet read, so room that is not used costs nothing.

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
    ///
    /// On Linux, a pipe is also enlarged to 1 MiB where the system allows, so that a
    /// large reply goes out in one write.
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

/// The capacity asked for standard output's pipe, in bytes: Linux's default ceiling for
/// an unprivileged process (`/proc/sys/fs/pipe-max-size`). Where that ceiling is lower,
/// or the user's pipes already hold their share of memory, the pipe keeps the size it
/// has.
const STDOUT_PIPE_SIZE: usize = 1024 * 1024;

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
        let sender = pipe::Sender::from_file(file).ok()?;
        #[cfg(target_os = "linux")]
        enlarge(&sender);
        Some(sender)
    }

    /// Asks for a pipe of [`STDOUT_PIPE_SIZE`](super::STDOUT_PIPE_SIZE) bytes; a refusal
    /// leaves the pipe as it was, which works, only with more waits for a large reply.
    #[cfg(target_os = "linux")]
    pub(super) fn enlarge(pipe: &pipe::Sender) {
        use nix::fcntl::{FcntlArg, fcntl};
        let size = i32::try_from(super::STDOUT_PIPE_SIZE).unwrap_or(i32::MAX);
        // Never made smaller: a pipe someone already enlarged keeps its size.
        let now = fcntl(pipe, FcntlArg::F_GETPIPE_SZ).unwrap_or(size);
        if now < size
            && let Err(e) = fcntl(pipe, FcntlArg::F_SETPIPE_SZ(size))
        {
            tracing::debug!(error = %e, "standard output's pipe keeps its size");
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use nix::fcntl::{FcntlArg, fcntl};
    use tokio::net::unix::pipe;

    use super::STDOUT_PIPE_SIZE;
    use super::unix::enlarge;

    fn size(pipe: &pipe::Sender) -> usize {
        usize::try_from(fcntl(pipe, FcntlArg::F_GETPIPE_SZ).unwrap()).unwrap()
    }

    /// The most an unprivileged process may ask for.
    fn ceiling() -> usize {
        std::fs::read_to_string("/proc/sys/fs/pipe-max-size")
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }

    #[tokio::test]
    async fn a_pipe_is_enlarged_where_the_system_allows() {
        let (sender, _receiver) = pipe::pipe().unwrap();
        let before = size(&sender);
        assert!(before < STDOUT_PIPE_SIZE, "a new pipe holds {before} bytes");
        enlarge(&sender);
        if ceiling() >= STDOUT_PIPE_SIZE {
            assert_eq!(size(&sender), STDOUT_PIPE_SIZE);
        } else {
            // Refused (unless privileged): the pipe works at the size it had, or at one
            // the system granted.
            assert!(size(&sender) >= before);
        }
    }

    #[tokio::test]
    async fn a_larger_pipe_is_never_made_smaller() {
        let (sender, _receiver) = pipe::pipe().unwrap();
        let larger = i32::try_from(2 * STDOUT_PIPE_SIZE).unwrap();
        // Past the ceiling only with CAP_SYS_RESOURCE; without, half of it will do.
        if fcntl(&sender, FcntlArg::F_SETPIPE_SZ(larger)).is_err() {
            let half = i32::try_from(STDOUT_PIPE_SIZE / 2).unwrap();
            fcntl(&sender, FcntlArg::F_SETPIPE_SZ(half)).unwrap();
            enlarge(&sender);
            assert!(size(&sender) >= STDOUT_PIPE_SIZE / 2);
            return;
        }
        enlarge(&sender);
        assert_eq!(size(&sender), 2 * STDOUT_PIPE_SIZE);
    }

    #[tokio::test]
    async fn a_large_reply_goes_out_in_one_write() {
        let (sender, _receiver) = pipe::pipe().unwrap();
        enlarge(&sender);
        if size(&sender) < STDOUT_PIPE_SIZE {
            return;
        }
        let reply = vec![b'x'; 240 * 1024];
        sender.writable().await.unwrap();
        // A 64 KiB pipe takes a quarter of it.
        assert_eq!(sender.try_write(&reply).unwrap(), reply.len());
    }
}
