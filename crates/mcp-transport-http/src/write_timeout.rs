//! A connection wrapper that ends writes which make no progress for too long.
//!
//! A client that stops reading its SSE stream fills the socket's send buffer; hyper's next
//! write then waits forever, and the request holds its concurrency slot (and its handler
//! waits on a full notification channel) for as long. This wrapper turns such a stall into
//! an `io::ErrorKind::TimedOut` error after the configured time, which ends the connection
//! and cancels its requests. Reads pass through untouched: waiting for a slow handler is not
//! a stall.

use std::future::Future as _;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use pin_project_lite::pin_project;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

pin_project! {
    /// `inner` with a limit on how long a write may stay pending.
    pub(crate) struct WriteTimeout<I> {
        #[pin]
        inner: I,
        // Boxed so that the wrapper stays `Unpin`, as hyper wants its IO.
        timer: Pin<Box<Sleep>>,
        // Whether `timer` measures the current stall.
        armed: bool,
        // Zero turns the limit off.
        limit: Duration,
    }
}

impl<I> WriteTimeout<I> {
    pub(crate) fn new(inner: I, limit: Duration) -> Self {
        WriteTimeout {
            inner,
            timer: Box::pin(tokio::time::sleep(limit)),
            armed: false,
            limit,
        }
    }
}

/// Called when a write is pending: starts the stall clock, or reports that it ran out.
fn stalled(
    timer: &mut Pin<Box<Sleep>>,
    armed: &mut bool,
    limit: Duration,
    cx: &mut Context<'_>,
) -> Option<io::Error> {
    if limit.is_zero() {
        return None;
    }
    if !*armed {
        timer.as_mut().reset(Instant::now() + limit);
        *armed = true;
    }
    timer.as_mut().poll(cx).is_ready().then(|| {
        io::Error::new(
            io::ErrorKind::TimedOut,
            "the client has not read its response for too long",
        )
    })
}

macro_rules! guard_write {
    ($this:ident, $cx:ident, $poll:expr) => {
        match $poll {
            Poll::Ready(result) => {
                *$this.armed = false;
                Poll::Ready(result)
            }
            Poll::Pending => match stalled($this.timer, $this.armed, *$this.limit, $cx) {
                Some(error) => Poll::Ready(Err(error)),
                None => Poll::Pending,
            },
        }
    };
}

impl<I: AsyncRead> AsyncRead for WriteTimeout<I> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        self.project().inner.poll_read(cx, buf)
    }
}

impl<I: AsyncWrite> AsyncWrite for WriteTimeout<I> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.project();
        guard_write!(this, cx, this.inner.poll_write(cx, buf))
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.project();
        guard_write!(this, cx, this.inner.poll_write_vectored(cx, bufs))
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.project();
        guard_write!(this, cx, this.inner.poll_flush(cx))
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.project();
        guard_write!(this, cx, this.inner.poll_shutdown(cx))
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncWriteExt as _;

    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_stalled_write_times_out_and_progress_resets_the_clock() {
        // A pipe with a 4-byte buffer that nobody reads.
        let (writer, mut reader) = tokio::io::duplex(4);
        let mut writer = Box::pin(WriteTimeout::new(writer, Duration::from_secs(5)));
        writer.write_all(b"1234").await.unwrap();
        let err = writer.write_all(b"5").await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);

        // Reading makes room; the next write succeeds and the clock starts over.
        let mut buf = [0; 4];
        tokio::io::AsyncReadExt::read_exact(&mut reader, &mut buf)
            .await
            .unwrap();
        writer.write_all(b"abcd").await.unwrap();
        let start = Instant::now();
        let err = writer.write_all(b"e").await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        assert_eq!(start.elapsed(), Duration::from_secs(5));
    }

    #[tokio::test(start_paused = true)]
    async fn a_write_stalled_just_under_the_timeout_goes_through() {
        let (writer, mut reader) = tokio::io::duplex(4);
        let mut writer = Box::pin(WriteTimeout::new(writer, Duration::from_secs(5)));
        writer.write_all(b"1234").await.unwrap();
        let start = Instant::now();
        let stalled = tokio::spawn(async move { writer.write_all(b"5").await });
        // The reader makes room 1 ms before the write would time out.
        tokio::time::sleep(Duration::from_millis(4_999)).await;
        let mut buf = [0; 4];
        tokio::io::AsyncReadExt::read_exact(&mut reader, &mut buf)
            .await
            .unwrap();
        stalled.await.unwrap().unwrap();
        assert_eq!(start.elapsed(), Duration::from_millis(4_999));
    }
}
