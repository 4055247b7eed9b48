//! Newline-delimited framing: one JSON-RPC message per line, read with a bound and written
//! as exactly one line.
//!
//! The rules come from <https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/stdio> (relative to the shared
//! copy of the specification): messages are delimited by newlines and must not contain
//! embedded newlines. The same framing serves any byte stream a custom transport offers,
//! so nothing here knows about processes; [`stdio`] merely wraps this process's own
//! standard streams.
//!
//! The reader follows the recovery of tokio-util's `LinesCodec` with a maximum length: an
//! over-long line is reported once and then skipped up to the next newline without being
//! buffered, so a peer cannot make this side hold more than the limit plus one read chunk.

use std::fmt;
use std::io::{self, IoSlice};
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use bytes::{Buf, Bytes, BytesMut};
use mcp_jsonrpc::{FrameReader, FrameWriter, TransportError, WriteNow};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufWriter};

use crate::stdio::{StdinStream, StdoutStream};

/// The default maximum length of one incoming line, in bytes (4 MiB), not counting the
/// newline and an optional carriage return before it.
pub const DEFAULT_MAX_LINE: usize = 4 * 1024 * 1024;

/// The default time one outgoing frame may take to write and flush (30 seconds) before
/// the peer is taken to have stopped reading.
pub const DEFAULT_WRITE_TIMEOUT: Duration = Duration::from_secs(30);

/// How much room a fresh read buffer gets beyond a partial line. The frames handed out
/// are slices of the buffer, so a reader of small messages cycles through all of its
/// first allocation, which stays resident: 16 KiB holds a few dozen requests, and a long
/// line grows the buffer (`make_room`) to hold several of its kind (64 KiB here
/// kept 48 KiB more of a small server resident, for reads that rarely filled it).
const READ_CHUNK: usize = 16 * 1024;

/// The least free space worth issuing a read into; below it the buffer is reclaimed or
/// replaced first, so that a read is never wasted on a handful of bytes.
const MIN_SPARE: usize = 8 * 1024;

/// The write buffer's size. A frame shorter than this is copied into the buffer together
/// with its newline and reaches the peer in one write; a longer frame is written straight
/// from its own memory, so large frames are never copied.
const WRITE_BUFFER: usize = 64 * 1024;

/// Reads newline-delimited frames from a byte stream, with a maximum line length.
///
/// Each line is yielded as [`Bytes`] without its `\n` and without one `\r` before it, so
/// CRLF endings are tolerated. Lines that are empty or hold only JSON whitespace (spaces,
/// tabs, carriage returns) are skipped. Invalid UTF-8 and invalid JSON are passed through
/// untouched: the engine answers them with a parse error (-32700) and reading goes on.
/// The framing is that of <https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/stdio>.
///
/// # Limits
///
/// A line longer than the maximum ([`DEFAULT_MAX_LINE`] unless set with
/// [`LineReader::with_max_line`]) yields exactly one
/// [`TransportError::FrameTooLong`], which is recoverable: the reader then discards input
/// up to and including the next newline without buffering it, and continues with the
/// line after. However long the line, the reader holds at most the maximum plus one read
/// chunk (64 KiB) of it. An over-long last line that ends at end of file still yields its
/// error.
///
/// Frames are split off the read buffer without copying, so a frame shares the allocation
/// it was read into (at most the limit plus one read chunk) and keeps it alive for as long
/// as the frame lives. A caller that keeps frames for long should copy them.
///
/// A last line without a newline is yielded when the stream ends; then the reader yields
/// `None`. An I/O error is yielded once as [`TransportError::Io`], and the reader yields
/// `None` from then on.
///
/// # Cancel safety
///
/// [`FrameReader::read_frame`] is cancel safe: if its future is dropped before it
/// completes, no input is lost, and the next call continues where the dropped one stopped.
///
/// # Example
///
/// ```
/// use mcp_jsonrpc::{FrameReader, TransportError};
/// use mcp_transport_stdio::LineReader;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let input: &[u8] = b"{\"id\":1}\r\n\n{\"id\":2,\"pad\":\"........\"}\n{\"id\":3}";
/// let mut reader = LineReader::with_max_line(input, 16);
///
/// // The CRLF ending is removed and the blank line is skipped.
/// let Some(Ok(first)) = reader.read_frame().await else { panic!("expected a frame") };
/// assert_eq!(first, &b"{\"id\":1}"[..]);
///
/// // The second line is longer than 16 bytes: one recoverable error, then the next line.
/// let Some(Err(error)) = reader.read_frame().await else { panic!("expected an error") };
/// assert!(matches!(error, TransportError::FrameTooLong { limit: 16 }));
/// assert!(error.is_recoverable());
///
/// // The last line has no newline; it is still a frame, and then the stream is over.
/// let Some(Ok(last)) = reader.read_frame().await else { panic!("expected a frame") };
/// assert_eq!(last, &b"{\"id\":3}"[..]);
/// assert!(reader.read_frame().await.is_none());
/// # }
/// ```
pub struct LineReader<R> {
    reader: R,
    /// Input read but not yet yielded. Outside [`ReadState::Discard`] it starts at the
    /// beginning of a line.
    buf: BytesMut,
    /// How many bytes at the front of `buf` are known to hold no newline, so that each
    /// byte is searched once however many reads a line takes to arrive.
    scanned: usize,
    /// The size of `buf`'s allocation, which `buf.capacity()` does not tell once lines
    /// have been split off its front.
    allocated: usize,
    max_line: usize,
    state: ReadState,
}

/// Where the reader stands in its input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ReadState {
    /// At a line, looking for its newline.
    Scan,
    /// Inside a line already reported as too long, dropping input up to its newline.
    Discard,
    /// The input has ended or failed; every later read yields `None`.
    Done,
}

impl<R> LineReader<R> {
    /// Creates a reader with the default maximum line length, [`DEFAULT_MAX_LINE`].
    pub fn new(reader: R) -> Self {
        Self::with_max_line(reader, DEFAULT_MAX_LINE)
    }

    /// Creates a reader that refuses lines longer than `max_line` bytes, not counting the
    /// newline and an optional carriage return before it.
    pub fn with_max_line(reader: R, max_line: usize) -> Self {
        Self {
            reader,
            buf: BytesMut::new(),
            scanned: 0,
            allocated: 0,
            max_line,
            state: ReadState::Scan,
        }
    }

    /// Returns the maximum line length, in bytes.
    pub fn max_line(&self) -> usize {
        self.max_line
    }

    /// Returns a shared reference to the underlying reader.
    pub fn get_ref(&self) -> &R {
        &self.reader
    }

    /// Returns the capacity of the internal buffer, so tests can prove that it stays
    /// bounded however long a peer's line is. Not part of the stable interface.
    #[doc(hidden)]
    pub fn buffered_capacity(&self) -> usize {
        self.allocated.max(self.buf.capacity())
    }

    /// Takes the next complete line out of the buffer without reading. Returns `None`
    /// when the buffer holds no complete line (or the reader is done), in which case the
    /// caller reads more input.
    fn decode(&mut self) -> Option<Result<Bytes, TransportError>> {
        loop {
            match self.state {
                ReadState::Done => return None,
                ReadState::Discard => {
                    if let Some(newline) = memchr::memchr(b'\n', &self.buf) {
                        self.buf.advance(newline + 1);
                        self.state = ReadState::Scan;
                    } else {
                        // The whole buffer belongs to the over-long line. Dropping it
                        // here, instead of keeping it, is what bounds memory.
                        self.buf.clear();
                        return None;
                    }
                }
                ReadState::Scan => {
                    let Some(offset) = memchr::memchr(b'\n', &self.buf[self.scanned..]) else {
                        self.scanned = self.buf.len();
                        // The partial line may still end in a `\r` that its newline will
                        // strip, so it is over the limit only beyond one byte more.
                        if self.scanned > self.max_line.saturating_add(1) {
                            self.buf.clear();
                            self.scanned = 0;
                            self.state = ReadState::Discard;
                            return Some(Err(self.too_long()));
                        }
                        return None;
                    };
                    let newline = self.scanned + offset;
                    self.scanned = 0;
                    if let Some(item) = self.take_line(newline, newline + 1) {
                        return Some(item);
                    }
                }
            }
        }
    }

    /// Handles the end of the input: the partial line left in the buffer, if any, is the
    /// last line.
    fn decode_eof(&mut self) -> Option<Result<Bytes, TransportError>> {
        let state = std::mem::replace(&mut self.state, ReadState::Done);
        if state != ReadState::Scan || self.buf.is_empty() {
            // After `Discard`, the over-long line has already had its error.
            return None;
        }
        let end = self.buf.len();
        self.take_line(end, end)
    }

    /// Removes `buf[..consumed]`, a line of `end` bytes followed by its delimiter, and says
    /// what to yield for it: `None` when the line is blank and is skipped.
    fn take_line(&mut self, end: usize, consumed: usize) -> Option<Result<Bytes, TransportError>> {
        let content = self.buf[..end]
            .strip_suffix(b"\r")
            .unwrap_or(&self.buf[..end]);
        let len = content.len();
        // The length is checked before blankness so the outcome is the same whether the
        // line arrived whole or was already dropped while it was still partial.
        if len > self.max_line {
            self.buf.advance(consumed);
            return Some(Err(self.too_long()));
        }
        if content
            .iter()
            .all(|byte| matches!(byte, b' ' | b'\t' | b'\r'))
        {
            self.buf.advance(consumed);
            return None;
        }
        let mut line = self.buf.split_to(consumed);
        line.truncate(len);
        Some(Ok(line.freeze()))
    }

    fn too_long(&self) -> TransportError {
        TransportError::FrameTooLong {
            limit: self.max_line,
        }
    }

    /// Makes sure the buffer has room for a worthwhile read, without letting it grow past
    /// the line limit plus one read chunk.
    fn make_room(&mut self) {
        let len = self.buf.len();
        if self.buf.capacity() - len >= MIN_SPARE {
            return;
        }
        let limit = self.max_line.saturating_add(1).saturating_add(READ_CHUNK);
        // When every frame split off the current allocation has been dropped, the partial
        // line moves to its front and the allocation is reused, unless that partial line
        // is over a quarter of the allocation: long lines (64 KiB arguments arrive in
        // 64 KiB reads) would then move almost whole once per line, so the buffer grows
        // to hold several of them instead (moving at most a third of what is read).
        let cramped = len.saturating_mul(4) > self.allocated && self.allocated < limit;
        if !cramped && self.buf.try_reclaim(MIN_SPARE) {
            return;
        }
        // Otherwise allocate afresh. Growing by at least double keeps the copying of a
        // long line linear, and the cap holds because a line is discarded once it passes
        // `max_line + 1` bytes, so `len` never exceeds that here.
        let capacity = len
            .saturating_add(len.max(READ_CHUNK))
            .max(if cramped {
                len.saturating_mul(4).max(self.allocated.saturating_mul(2))
            } else {
                0
            })
            .min(limit)
            .max(len.saturating_add(MIN_SPARE));
        let mut fresh = BytesMut::with_capacity(capacity);
        self.allocated = fresh.capacity();
        fresh.extend_from_slice(&self.buf);
        self.buf = fresh;
    }
}

impl<R: AsyncRead + Unpin + Send + 'static> FrameReader for LineReader<R> {
    async fn read_frame(&mut self) -> Option<Result<Bytes, TransportError>> {
        loop {
            if let Some(item) = self.decode() {
                return Some(item);
            }
            if self.state == ReadState::Done {
                return None;
            }
            self.make_room();
            // `read_buf` is cancel safe and nothing else here awaits, which is what makes
            // this whole method cancel safe.
            match self.reader.read_buf(&mut self.buf).await {
                Ok(0) => return self.decode_eof(),
                Ok(_) => {}
                // An interrupted read carries no data and no failure; std's `read_to_end`
                // retries it too.
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => {
                    self.state = ReadState::Done;
                    self.buf = BytesMut::new();
                    self.allocated = 0;
                    return Some(Err(TransportError::Io(error)));
                }
            }
        }
    }
}

impl<R: fmt::Debug> fmt::Debug for LineReader<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LineReader")
            .field("reader", &self.reader)
            .field("buffered", &self.buf.len())
            .field("max_line", &self.max_line)
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

/// Writes frames as newline-terminated lines, with a write timeout.
///
/// Each frame is written followed by one `\n` into a buffer that
/// [`FrameWriter::flush`] (or a full buffer) pushes to the peer, so it reaches the peer as
/// exactly one line (<https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/stdio>: messages are delimited
/// by newlines and must not contain embedded ones). A frame holding a `\n` or `\r` byte is
/// refused with an [`io::ErrorKind::InvalidInput`] error and nothing is written: the
/// engine's serializer never produces one, and a bare `\r` is a line break to peers that
/// read with universal newlines, so refusing both keeps every message on one line for
/// every reader.
///
/// # Limits
///
/// Writing one frame, and each flush, may take at most the write timeout
/// ([`DEFAULT_WRITE_TIMEOUT`] unless set with [`LineWriter::with_write_timeout`]); past it
/// the write fails with [`TransportError::WriteTimeout`], so a peer that never reads makes
/// this side fail instead of hang. A timeout or an I/O error may leave part of a line on
/// the wire, so after one every later write fails with [`TransportError::Closed`] rather
/// than splice a message onto the broken line. A line taken by
/// [`write_now`](FrameWriter::write_now) never waits; if its write fails, the next write
/// or flush reports that error, and the ones after it [`TransportError::Closed`].
///
/// The timeout uses tokio's timer, so a writer with a timeout must run on a runtime with
/// the time driver enabled (as `#[tokio::main]` and `#[tokio::test]` runtimes are).
///
/// # Example
///
/// ```
/// use bytes::Bytes;
/// use mcp_jsonrpc::FrameWriter;
/// use mcp_transport_stdio::LineWriter;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let mut writer = LineWriter::new(Vec::new());
/// writer.write_frame(Bytes::from_static(b"{\"id\":1}")).await.expect("a vector accepts writes");
/// writer.flush().await.expect("a vector accepts writes");
/// assert_eq!(writer.get_ref().as_slice(), b"{\"id\":1}\n");
///
/// // A frame that would span two lines is refused, and nothing is written.
/// assert!(writer.write_frame(Bytes::from_static(b"{}\n{}")).await.is_err());
/// assert_eq!(writer.get_ref().as_slice(), b"{\"id\":1}\n");
/// # }
/// ```
pub struct LineWriter<W> {
    writer: BufWriter<W>,
    timeout: Option<Duration>,
    state: WriteState,
    /// Why a [`write_now`](FrameWriter::write_now) failed, for the next write or flush
    /// to report.
    failure: Option<io::Error>,
}

/// Whether the writer may still write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WriteState {
    Open,
    /// A write failed or timed out, possibly halfway through a line.
    Broken,
    /// [`FrameWriter::close`] has been called.
    Closed,
}

impl<W: AsyncWrite> LineWriter<W> {
    /// Creates a writer with the default write timeout, [`DEFAULT_WRITE_TIMEOUT`].
    pub fn new(writer: W) -> Self {
        Self::with_write_timeout(writer, DEFAULT_WRITE_TIMEOUT)
    }

    /// Creates a writer whose every frame must be written and flushed within `timeout`;
    /// `None` waits for as long as the peer takes.
    pub fn with_write_timeout(writer: W, timeout: impl Into<Option<Duration>>) -> Self {
        Self {
            writer: BufWriter::with_capacity(WRITE_BUFFER, writer),
            timeout: timeout.into(),
            state: WriteState::Open,
            failure: None,
        }
    }

    /// Refuses to write after a failure (part of a line may be on the wire; a failed
    /// `write_now`'s own error is reported the first time) or a close.
    fn check_open(&mut self) -> Result<(), TransportError> {
        if let Some(failure) = self.failure.take() {
            return Err(TransportError::Io(failure));
        }
        match self.state {
            WriteState::Open => Ok(()),
            WriteState::Broken => Err(TransportError::Closed(Some(
                "an earlier write failed and may have left a partial line".to_owned(),
            ))),
            WriteState::Closed => Err(TransportError::Closed(None)),
        }
    }

    /// Writes `pieces` and a newline as one line, within the write timeout unless the
    /// line fits in the buffer's free room (it is only copied there, so it cannot wait on
    /// the peer and needs no timer). A line break in any piece is refused, before
    /// anything is written; a failed write breaks the writer. At most three pieces (a
    /// frame, or the pieces of a large result).
    async fn write_line(&mut self, pieces: &[&[u8]]) -> Result<(), TransportError>
    where
        W: Unpin,
    {
        self.check_open()?;
        if pieces
            .iter()
            .any(|piece| memchr::memchr2(b'\n', b'\r', piece).is_some())
        {
            return Err(TransportError::Io(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a frame must not contain a line break",
            )));
        }
        let len = pieces.iter().map(|piece| piece.len()).sum::<usize>();
        let fits = self.writer.buffer().len().saturating_add(len) < WRITE_BUFFER;
        let writer = &mut self.writer;
        let line = async move {
            let mut slices = [IoSlice::new(&[]); 4];
            debug_assert!(pieces.len() <= 3, "a line of at most three pieces");
            let count = pieces.len().min(3);
            for (slice, piece) in slices.iter_mut().zip(&pieces[..count]) {
                *slice = IoSlice::new(piece);
            }
            slices[count] = IoSlice::new(b"\n");
            let mut rest = &mut slices[..=count];
            while !rest.is_empty() {
                let written = writer.write_vectored(rest).await?;
                if written == 0 {
                    return Err(io::Error::from(io::ErrorKind::WriteZero));
                }
                IoSlice::advance_slices(&mut rest, written);
            }
            Ok(())
        };
        let result = if fits {
            line.await.map_err(TransportError::Io)
        } else {
            within(self.timeout, line).await
        };
        if result.is_err() {
            self.state = WriteState::Broken;
        }
        result
    }

    /// Returns the write timeout, or `None` when writes may take forever.
    pub fn write_timeout(&self) -> Option<Duration> {
        self.timeout
    }

    /// Returns a shared reference to the underlying writer. Every frame written before the
    /// last completed [`FrameWriter::flush`] has reached it.
    pub fn get_ref(&self) -> &W {
        self.writer.get_ref()
    }
}

impl<W: AsyncWrite + Unpin + Send + 'static> FrameWriter for LineWriter<W> {
    /// Writes `frame` and a newline into the buffer, which reaches the peer when it fills
    /// or at [`FrameWriter::flush`].
    ///
    /// Not cancel safe: dropping the future may leave part of a line on the wire. The
    /// engine does not drop it, and the write timeout bounds how long it can take.
    async fn write_frame(&mut self, frame: Bytes) -> Result<(), TransportError> {
        self.write_line(&[&frame]).await
    }

    /// Writes the pieces and a newline as one line: copied into the buffer when they fit
    /// in its free room, else written to the pipe as they are, with one `writev` when the
    /// pipe takes them all (a large result is never copied).
    ///
    /// Not cancel safe, as [`write_frame`](FrameWriter::write_frame).
    async fn write_frame_parts(&mut self, parts: [Bytes; 3]) -> Result<(), TransportError> {
        let [head, body, tail] = &parts;
        self.write_line(&[head, body, tail]).await
    }

    /// Writes the line at once when the buffer is empty and the line fits in it: copied
    /// there, then one write to the pipe. What the pipe does not take stays buffered for
    /// the engine's flush ([`WriteNow::Buffered`]); a failed write breaks the writer, and
    /// that flush reports it. A line that contains a line break, or is too long for the
    /// buffer, is left to [`write_frame`](FrameWriter::write_frame) (and its error or
    /// timeout).
    fn write_now(&mut self, frame: &[u8]) -> WriteNow {
        let idle = matches!(self.state, WriteState::Open) && self.writer.buffer().is_empty();
        if !idle || frame.len() >= WRITE_BUFFER || memchr::memchr2(b'\n', b'\r', frame).is_some() {
            return WriteNow::Later;
        }
        // Nobody waits on this context: the engine's flush registers its own.
        let mut cx = Context::from_waker(Waker::noop());
        let mut writer = Pin::new(&mut self.writer);
        // Copies into the empty buffer, which has room for both: they cannot wait.
        let copied = matches!(
            writer.as_mut().poll_write(&mut cx, frame),
            Poll::Ready(Ok(n)) if n == frame.len()
        ) && matches!(
            writer.as_mut().poll_write(&mut cx, b"\n"),
            Poll::Ready(Ok(1))
        );
        let failure = match copied.then(|| writer.poll_flush(&mut cx)) {
            Some(Poll::Ready(Ok(()))) => return WriteNow::Sent,
            Some(Poll::Pending) => return WriteNow::Buffered,
            Some(Poll::Ready(Err(e))) => e,
            None => io::Error::other("a line did not fit in the empty buffer"),
        };
        self.state = WriteState::Broken;
        self.failure = Some(failure);
        WriteNow::Buffered
    }

    /// Pushes the buffered lines to the peer, within the write timeout.
    async fn flush(&mut self) -> Result<(), TransportError> {
        self.check_open()?;
        let result = within(self.timeout, self.writer.flush()).await;
        if result.is_err() {
            self.state = WriteState::Broken;
        }
        result
    }

    /// Flushes and shuts the writer down, which a pipe's peer sees as end of file.
    ///
    /// Some writers cannot close on shutdown: tokio's `ChildStdin` and `Stdout` only
    /// flush, and their descriptor closes when the writer is dropped. After a failed
    /// write, the buffered rest of the broken line is dropped rather than sent. Closing
    /// twice is harmless; the second call does nothing.
    async fn close(&mut self) -> Result<(), TransportError> {
        let result = match self.state {
            WriteState::Closed => return Ok(()),
            WriteState::Open => within(self.timeout, self.writer.shutdown()).await,
            WriteState::Broken => within(self.timeout, self.writer.get_mut().shutdown()).await,
        };
        self.state = WriteState::Closed;
        result
    }
}

impl<W: AsyncWrite + fmt::Debug> fmt::Debug for LineWriter<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LineWriter")
            .field("writer", self.writer.get_ref())
            .field("timeout", &self.timeout)
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

/// Runs one write under the writer's timeout, if it has one.
async fn within(
    timeout: Option<Duration>,
    work: impl Future<Output = io::Result<()>>,
) -> Result<(), TransportError> {
    let Some(limit) = timeout else {
        return work.await.map_err(TransportError::Io);
    };
    match tokio::time::timeout(limit, work).await {
        Ok(result) => result.map_err(TransportError::Io),
        Err(_elapsed) => Err(TransportError::WriteTimeout(limit)),
    }
}

/// Frames this process's standard input and output, for a server launched over stdio
/// (<https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/stdio>).
///
/// The reader has the default line limit and the writer the default write timeout. Only
/// protocol messages may be written to stdout, so logs belong on stderr.
///
/// When stdin and stdout are pipes (the way clients launch servers) they are driven in
/// non-blocking mode on the runtime's reactor ([`StdinStream`], [`StdoutStream`]); otherwise
/// tokio's blocking streams are used, whose stdin read runs on a separate thread that
/// cannot be cancelled: then shutting the runtime down may wait for that read to return.
/// Must be called within a tokio runtime with IO enabled.
pub fn stdio() -> (LineReader<StdinStream>, LineWriter<StdoutStream>) {
    (
        LineReader::new(StdinStream::open()),
        LineWriter::new(StdoutStream::open()),
    )
}
