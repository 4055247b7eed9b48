//! The seam between the engine and a transport: frames in, frames out.
//!
//! A transport delivers whole messages as bytes (one frame per JSON-RPC message; the stdio
//! transport cuts them at newlines, the HTTP transport takes one per body or SSE event) and
//! accepts whole messages to send. Framing, limits on frame size, and process or socket
//! management live in the transport; parsing, ids and dispatch live here.

use std::future::Future;

use bytes::Bytes;

/// Why a frame could not be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TransportError {
    /// A frame exceeded the transport's size limit. The transport has discarded it and
    /// reading continues with the next frame.
    #[error("frame of more than {limit} bytes discarded")]
    FrameTooLong {
        /// The configured limit, in bytes.
        limit: usize,
    },
    /// Writing a frame did not finish in time: the peer is not reading.
    #[error("write did not complete within {0:?}; the peer is not reading")]
    WriteTimeout(std::time::Duration),
    /// The connection is closed (the peer hung up, or the process exited).
    #[error("transport closed{}", .0.as_deref().map(|r| format!(": {r}")).unwrap_or_default())]
    Closed(Option<String>),
    /// An I/O error of the underlying pipe or socket.
    #[error("transport I/O error")]
    Io(#[from] std::io::Error),
}

impl TransportError {
    /// Whether reading can go on after this error (only an over-long frame, so far).
    pub fn is_recoverable(&self) -> bool {
        matches!(self, TransportError::FrameTooLong { .. })
    }
}

/// The receiving half of a transport.
///
/// `read_frame` yields one message's bytes at a time, without delimiters. `None` means the
/// peer closed the connection cleanly. A recoverable error (see
/// [`TransportError::is_recoverable`]) is reported once and reading continues; any other
/// error ends the connection.
///
/// Cancel safety: the engine may drop a pending `read_frame` future (for example at
/// shutdown) and never calls it again afterwards, so implementations need not be cancel
/// safe beyond not panicking.
pub trait FrameReader: Send + 'static {
    /// Reads the next frame.
    fn read_frame(&mut self) -> impl Future<Output = Option<Result<Bytes, TransportError>>> + Send;
}

/// The sending half of a transport.
pub trait FrameWriter: Send + 'static {
    /// Sends one frame: one complete JSON-RPC message, serialized, without a delimiter
    /// (the transport adds its own). The frame never contains a raw newline.
    ///
    /// The transport may buffer the frame until [`flush`](Self::flush): the engine writes
    /// every frame already queued, then flushes once, so a burst costs one system call.
    fn write_frame(
        &mut self,
        frame: Bytes,
    ) -> impl Future<Output = Result<(), TransportError>> + Send;

    /// Sends one frame given in three pieces, whose concatenation is the frame as
    /// [`write_frame`](Self::write_frame) takes it: the pieces of
    /// [`encode_raw_result_parts`](crate::encode_raw_result_parts). The engine sends a large
    /// result this way, so that a transport that writes several buffers at once (`writev`)
    /// never copies it. The default joins the pieces and calls `write_frame`.
    fn write_frame_parts(
        &mut self,
        parts: [Bytes; 3],
    ) -> impl Future<Output = Result<(), TransportError>> + Send {
        async move { self.write_frame(Bytes::from(parts.concat())).await }
    }

    /// Writes one frame now, without waiting, if the transport can: the engine's
    /// write-through ([`PeerConfig::write_through`](crate::PeerConfig::write_through)).
    /// The engine calls it only while the writer is idle (its last
    /// [`flush`](Self::flush) finished and nothing is queued), from the sending task and
    /// under a lock: it must not block.
    ///
    /// [`WriteNow::Sent`] says the frame and its delimiter went to the operating system;
    /// [`WriteNow::Buffered`] that the transport took it whole but some of it waits in its
    /// buffer, which the engine's write loop then flushes (also the way to report a
    /// failed write: the flush fails); [`WriteNow::Later`] that nothing was taken, and the
    /// engine queues the frame for [`write_frame`](Self::write_frame). The default takes
    /// nothing.
    fn write_now(&mut self, frame: &[u8]) -> WriteNow {
        let _ = frame;
        WriteNow::Later
    }

    /// Pushes buffered frames to the peer. The default has nothing to push.
    fn flush(&mut self) -> impl Future<Output = Result<(), TransportError>> + Send {
        async { Ok(()) }
    }

    /// Flushes and closes the sending direction (for stdio: closes the pipe, which the
    /// peer sees as EOF).
    fn close(&mut self) -> impl Future<Output = Result<(), TransportError>> + Send;
}

/// What [`FrameWriter::write_now`] did with a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum WriteNow {
    /// The whole frame, with its delimiter, went to the operating system.
    Sent,
    /// The transport took the whole frame, but some of it is still in its buffer: a
    /// [`FrameWriter::flush`] must follow.
    Buffered,
    /// Nothing was taken: the frame goes through [`FrameWriter::write_frame`].
    Later,
}
