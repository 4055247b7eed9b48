//! Data-driven tests of the stdio line framing: bytes go in as separate reads, frames and
//! errors come out, and only the `check` functions call the framing API.

use std::collections::VecDeque;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use mcp_jsonrpc::{FrameReader, FrameWriter, TransportError, WriteNow};
use mcp_transport_stdio::{DEFAULT_MAX_LINE, DEFAULT_WRITE_TIMEOUT, LineReader, LineWriter, stdio};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt, DuplexStream, ReadBuf};

/// What one call of `read_frame` should yield.
#[derive(Debug, Clone, Copy)]
enum Expect {
    /// A frame with exactly these bytes.
    Frame(&'static [u8]),
    /// One `FrameTooLong` error carrying the reader's limit.
    TooLong,
    /// An I/O error of this kind.
    Io(io::ErrorKind),
    /// `None`: the input is over.
    Eof,
}

use Expect::{Eof, Frame, TooLong};

/// What one call of `read_frame` did yield, in a form that compares with [`Expect`].
#[derive(Debug, PartialEq, Eq)]
enum Got {
    Frame(Bytes),
    TooLong,
    Io(io::ErrorKind),
    Eof,
}

impl From<Expect> for Got {
    fn from(expect: Expect) -> Self {
        match expect {
            Expect::Frame(bytes) => Got::Frame(Bytes::from_static(bytes)),
            Expect::TooLong => Got::TooLong,
            Expect::Io(kind) => Got::Io(kind),
            Expect::Eof => Got::Eof,
        }
    }
}

/// One step of a scripted reader: some bytes for one read, or a failed read.
#[derive(Debug, Clone)]
enum Step {
    Data(Bytes),
    Fail(io::ErrorKind),
}

/// An `AsyncRead` that hands out its script one step per read (less when the caller's
/// buffer is smaller), then end of file.
#[derive(Debug)]
struct Script(VecDeque<Step>);

impl AsyncRead for Script {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        loop {
            match self.0.front_mut() {
                None => return Poll::Ready(Ok(())),
                Some(Step::Fail(kind)) => {
                    let kind = *kind;
                    self.0.pop_front();
                    return Poll::Ready(Err(io::Error::new(kind, "scripted failure")));
                }
                // An empty read means end of file, so empty steps are skipped.
                Some(Step::Data(data)) if data.is_empty() => {
                    self.0.pop_front();
                }
                Some(Step::Data(data)) => {
                    let n = data.len().min(buf.remaining());
                    buf.put_slice(&data.split_to(n));
                    return Poll::Ready(Ok(()));
                }
            }
        }
    }
}

/// The memory a reader may hold, beyond its line limit: one read chunk and change.
const SLACK: usize = 128 * 1024;

/// Inputs up to this size are also replayed whole and one byte per read.
const REPLAY_LIMIT: usize = 64 * 1024;

/// Reads `script` to the end with a limit of `max`, asserting on the way that the buffer
/// stays bounded and that the end is final.
async fn read_all(script: Vec<Step>, max: usize) -> Vec<Got> {
    let mut reader = LineReader::with_max_line(Script(script.into()), max);
    let mut got = Vec::new();
    loop {
        let item = reader.read_frame().await;
        assert!(
            reader.buffered_capacity() <= max + SLACK,
            "buffer capacity {} exceeds the limit {max} plus {SLACK}",
            reader.buffered_capacity(),
        );
        match item {
            None => break,
            Some(Ok(frame)) => got.push(Got::Frame(frame)),
            Some(Err(TransportError::FrameTooLong { limit })) => {
                assert_eq!(limit, max, "the error carries the configured limit");
                got.push(Got::TooLong);
            }
            Some(Err(TransportError::Io(error))) => got.push(Got::Io(error.kind())),
            Some(Err(other)) => panic!("unexpected error {other:?}"),
        }
    }
    got.push(Got::Eof);
    assert!(reader.read_frame().await.is_none(), "the end is final");
    got
}

/// Feeds `chunks` to a reader with a limit of `max`, one chunk per read, and compares what
/// it yields with `expected`. Small inputs are replayed whole and one byte per read too:
/// framing must not depend on how the peer's writes were split.
async fn check(chunks: &[&'static [u8]], max: usize, expected: &[Expect]) {
    let expected: Vec<Got> = expected.iter().copied().map(Got::from).collect();
    let script = chunks
        .iter()
        .map(|chunk| Step::Data(Bytes::from_static(chunk)))
        .collect();
    assert_eq!(read_all(script, max).await, expected, "as given");

    if chunks.iter().map(|chunk| chunk.len()).sum::<usize>() <= REPLAY_LIMIT {
        let whole = Bytes::from(chunks.concat());
        let script = vec![Step::Data(whole.clone())];
        assert_eq!(read_all(script, max).await, expected, "in one read");
        let script = (0..whole.len())
            .map(|i| Step::Data(whole.slice(i..=i)))
            .collect();
        assert_eq!(read_all(script, max).await, expected, "one byte per read");
    }
}

/// Like [`check`], with a read that fails with `error` between `before` and `after`.
async fn check_with_error(
    before: &[&'static [u8]],
    error: io::ErrorKind,
    after: &[&'static [u8]],
    max: usize,
    expected: &[Expect],
) {
    let expected: Vec<Got> = expected.iter().copied().map(Got::from).collect();
    let data = |chunk: &&'static [u8]| Step::Data(Bytes::from_static(chunk));
    let script = before
        .iter()
        .map(data)
        .chain([Step::Fail(error)])
        .chain(after.iter().map(data))
        .collect();
    assert_eq!(read_all(script, max).await, expected);
}

/// One test a row: `name: chunks, max line => the reads that must come of them` (the
/// reader over `chunks` with a line limit of `max`, checked by [`check`]).
macro_rules! reads {
    ($($(#[$doc:meta])* $name:ident: $chunks:expr, $max:expr => $expected:expr;)*) => {
        $(
            $(#[$doc])*
            #[tokio::test]
            async fn $name() {
                check(&$chunks, $max, &$expected).await;
            }
        )*
    };
}

#[rustfmt::skip]
reads! {
    single_line: [b"{\"jsonrpc\":\"2.0\"}\n"], 64 => [Frame(b"{\"jsonrpc\":\"2.0\"}"), Eof];
    many_lines_in_one_chunk: [b"{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n"], 64 => [Frame(b"{\"a\":1}"), Frame(b"{\"b\":2}"), Frame(b"{\"c\":3}"), Eof];
    lines_spanning_chunk_boundaries: [b"{\"a\"", b":1}\n{", b"\"b\":2}", b"\n"], 64 => [Frame(b"{\"a\":1}"), Frame(b"{\"b\":2}"), Eof];
    line_split_into_one_byte_chunks: [b"{", b"\"", b"a", b"\"", b":", b"1", b"}", b"\n", b"x", b"\n"], 64 => [Frame(b"{\"a\":1}"), Frame(b"x"), Eof];
    crlf_endings: [b"{\"a\":1}\r\n{\"b\":2}\r\n"], 64 => [Frame(b"{\"a\":1}"), Frame(b"{\"b\":2}"), Eof];
    crlf_split_between_chunks: [b"a\r", b"\nb\r", b"\n"], 64 => [Frame(b"a"), Frame(b"b"), Eof];
    only_one_carriage_return_is_stripped: [b"a\r\r\nb\rc\n"], 64 => [Frame(b"a\r"), Frame(b"b\rc"), Eof];
    blank_and_whitespace_only_lines_are_skipped: [b"\n\r\n \t \n\r\r\n{}\n  \n\n{ }\n"], 64 => [Frame(b"{}"), Frame(b"{ }"), Eof];
    whitespace_around_a_message_is_kept: [b"  {}\t\n"], 64 => [Frame(b"  {}\t"), Eof];
    empty_input: [], 64 => [Eof];
    line_of_exactly_max_length_is_accepted: [b"12345678\n"], 8 => [Frame(b"12345678"), Eof];
    carriage_return_does_not_count_toward_the_limit: [b"12345678\r\n"], 8 => [Frame(b"12345678"), Eof];
    line_of_max_plus_one_is_too_long: [b"123456789\n"], 8 => [TooLong, Eof];
    good_line_after_an_over_long_line_still_arrives: [b"123456789\n{}\n"], 8 => [TooLong, Frame(b"{}"), Eof];
    over_long_line_spanning_chunks_then_good_line: [b"{}\n1234", b"56789012", b"3456", b"7\n{\"a\":1}\n"], 8 => [Frame(b"{}"), TooLong, Frame(b"{\"a\":1}"), Eof];
    consecutive_over_long_lines_each_yield_one_error: [b"123456789\n1234567890123456789\nok\n"], 8 => [TooLong, TooLong, Frame(b"ok"), Eof];
    over_long_line_ending_at_eof_yields_its_error: [b"ok\n123456789"], 8 => [Frame(b"ok"), TooLong, Eof];
    very_long_line_ending_at_eof_yields_one_error: [b"1234567890", b"1234567890", b"1234567890"], 8 => [TooLong, Eof];
    partial_line_at_eof_is_a_frame: [b"{\"a\":1}\n{\"b\":2}"], 64 => [Frame(b"{\"a\":1}"), Frame(b"{\"b\":2}"), Eof];
    partial_line_at_eof_loses_its_carriage_return: [b"{}\r"], 64 => [Frame(b"{}"), Eof];
    blank_partial_line_at_eof_is_skipped: [b"{}\n \t\r"], 64 => [Frame(b"{}"), Eof];
    invalid_utf8_is_passed_through: [b"\xff\xfe{}\n\xc3\x28\n{}\n"], 64 => [Frame(b"\xff\xfe{}"), Frame(b"\xc3\x28"), Frame(b"{}"), Eof];
}

#[tokio::test]
async fn over_long_whitespace_line_is_too_long_not_blank() {
    // The length is judged first, because a long line is dropped before it is whole.
    check(&[b"          \nok\n"], 8, &[TooLong, Frame(b"ok"), Eof]).await;
}

/// One 64 KiB read of a line that never seems to end.
static FILLER: [u8; 64 * 1024] = [b'x'; 64 * 1024];

#[tokio::test]
async fn fifty_mib_line_in_64_kib_chunks_is_skipped_in_bounded_memory() {
    // `read_all` asserts after every frame that the buffer stays within the limit plus
    // 128 KiB; the line itself is 50 times the limit.
    let mut chunks: Vec<&'static [u8]> = vec![b"{\"before\":1}\n"];
    chunks.extend(std::iter::repeat_n(&FILLER[..], 50 * 16));
    chunks.push(b"\n{\"after\":2}\n");
    check(
        &chunks,
        1024 * 1024,
        &[
            Frame(b"{\"before\":1}"),
            TooLong,
            Frame(b"{\"after\":2}"),
            Eof,
        ],
    )
    .await;
}

#[tokio::test]
async fn long_line_under_the_limit_in_many_chunks() {
    // 48 reads of 64 KiB make a 3 MiB line, under the default 4 MiB limit: it must
    // arrive whole, with the buffer growing only as far as the limit allows.
    let mut chunks: Vec<&'static [u8]> = std::iter::repeat_n(&FILLER[..], 48).collect();
    chunks.push(b"\n");
    let mut reader = LineReader::new(Script(
        chunks
            .into_iter()
            .map(|chunk| Step::Data(Bytes::from_static(chunk)))
            .collect(),
    ));
    let Some(Ok(frame)) = reader.read_frame().await else {
        panic!("expected the long line");
    };
    assert_eq!(frame.len(), 48 * FILLER.len());
    assert!(frame.iter().all(|&byte| byte == b'x'));
    assert!(reader.buffered_capacity() <= DEFAULT_MAX_LINE + SLACK);
    assert!(reader.read_frame().await.is_none());
}

#[tokio::test]
async fn a_stream_of_long_lines_grows_the_buffer_to_hold_several() {
    // 40 lines of 60 KiB arrive in 64 KiB reads, so nearly every read ends inside a line.
    // Each frame is dropped before the next read, as a server that has parsed it does.
    // The buffer grows to hold several lines (four times the partial line it had to
    // move) rather than moving each partial line to its front (which would copy almost
    // every byte twice), and every line comes out whole.
    const LINE: usize = 60 * 1024;
    let mut stream = Vec::new();
    for i in 0..40u8 {
        stream.extend(std::iter::repeat_n(b'a' + i % 26, LINE));
        stream.push(b'\n');
    }
    let reads = stream
        .chunks(64 * 1024)
        .map(|chunk| Step::Data(Bytes::copy_from_slice(chunk)))
        .collect();
    let mut reader = LineReader::new(Script(reads));
    for i in 0..40u8 {
        let Some(Ok(frame)) = reader.read_frame().await else {
            panic!("expected line {i}");
        };
        assert_eq!(frame.len(), LINE);
        assert!(frame.iter().all(|&byte| byte == b'a' + i % 26));
    }
    assert!(reader.read_frame().await.is_none());
    let capacity = reader.buffered_capacity();
    assert!(capacity >= 3 * LINE, "capacity {capacity}");
    assert!(capacity <= DEFAULT_MAX_LINE + SLACK);
}

#[tokio::test]
async fn io_error_mid_stream_ends_the_stream() {
    // The partial line before the failure and everything after it are lost.
    check_with_error(
        &[b"{\"a\":1}\n{\"b\""],
        io::ErrorKind::ConnectionReset,
        &[b":2}\n{\"c\":3}\n"],
        64,
        &[
            Frame(b"{\"a\":1}"),
            Expect::Io(io::ErrorKind::ConnectionReset),
            Eof,
        ],
    )
    .await;
}

#[tokio::test]
async fn interrupted_read_is_retried() {
    check_with_error(
        &[b"{\"a\"", b":1}\n{\"b\""],
        io::ErrorKind::Interrupted,
        &[b":2}\n"],
        64,
        &[Frame(b"{\"a\":1}"), Frame(b"{\"b\":2}"), Eof],
    )
    .await;
}

#[tokio::test(start_paused = true)]
async fn dropped_read_loses_no_input() {
    let (mut near, far) = tokio::io::duplex(1024);
    let mut reader = LineReader::new(far);
    near.write_all(b"{\"a\"")
        .await
        .expect("the duplex has room");
    // The read waits for the rest of the line and is abandoned, as the engine may do.
    let abandoned = tokio::time::timeout(Duration::from_secs(1), reader.read_frame()).await;
    assert!(abandoned.is_err(), "no line is complete yet");
    near.write_all(b":1}\n").await.expect("the duplex has room");
    let Some(Ok(frame)) = reader.read_frame().await else {
        panic!("expected the line");
    };
    assert_eq!(frame, &b"{\"a\":1}"[..]);
}

/// One frame handed to `write_frame`, and whether it should be accepted.
#[derive(Debug, Clone, Copy)]
enum Write {
    /// Written, followed by a newline.
    Sent(&'static [u8]),
    /// Refused with `InvalidInput`, with nothing written and the writer still usable.
    Refused(&'static [u8]),
    /// Handed over in three pieces (`write_frame_parts`), written as one line.
    Pieces([&'static [u8]; 3]),
    /// Three pieces refused as `Refused` is.
    RefusedPieces([&'static [u8]; 3]),
}

/// Writes `frames` through a [`LineWriter`], closes it, and compares everything the other
/// end read up to end of file with `wire`.
async fn check_write(frames: &[Write], wire: &[u8]) {
    let (near, mut far) = tokio::io::duplex(4096);
    // The other end reads concurrently, so frames larger than the pipe get through, and it
    // sees end of file only if `close` works.
    let peer = tokio::spawn(async move {
        let mut read = Vec::new();
        far.read_to_end(&mut read)
            .await
            .map(|_| read)
            .expect("the duplex does not fail")
    });
    let mut writer = LineWriter::new(near);
    let pieces = |pieces: [&'static [u8]; 3]| pieces.map(Bytes::from_static);
    for frame in frames {
        match *frame {
            Write::Sent(bytes) => {
                let result = writer.write_frame(Bytes::from_static(bytes)).await;
                assert!(
                    result.is_ok(),
                    "writing {:?}: {result:?}",
                    bytes.escape_ascii().to_string()
                );
            }
            Write::Refused(bytes) => {
                let result = writer.write_frame(Bytes::from_static(bytes)).await;
                assert!(
                    matches!(&result, Err(TransportError::Io(error)) if error.kind() == io::ErrorKind::InvalidInput),
                    "{result:?}",
                );
            }
            Write::Pieces(parts) => {
                let result = writer.write_frame_parts(pieces(parts)).await;
                assert!(result.is_ok(), "writing pieces: {result:?}");
            }
            Write::RefusedPieces(parts) => {
                let result = writer.write_frame_parts(pieces(parts)).await;
                assert!(
                    matches!(&result, Err(TransportError::Io(error)) if error.kind() == io::ErrorKind::InvalidInput),
                    "{result:?}",
                );
            }
        }
    }
    writer.close().await.expect("close succeeds");
    let read = peer.await.expect("the peer task does not panic");
    assert_eq!(
        read.escape_ascii().to_string(),
        wire.escape_ascii().to_string()
    );
    assert!(
        matches!(
            writer.write_frame(Bytes::from_static(b"{}")).await,
            Err(TransportError::Closed(None))
        ),
        "writing after close fails",
    );
}

#[tokio::test]
async fn frame_is_written_with_a_newline() {
    check_write(&[Write::Sent(b"{\"a\":1}")], b"{\"a\":1}\n").await;
}

#[tokio::test]
async fn frames_are_written_one_per_line() {
    check_write(
        &[Write::Sent(b"{\"a\":1}"), Write::Sent(b"{\"b\":2}")],
        b"{\"a\":1}\n{\"b\":2}\n",
    )
    .await;
}

#[tokio::test]
async fn frame_larger_than_the_buffers_is_written_whole() {
    let frames = [
        Write::Sent(b"{}"),
        Write::Sent(&FILLER),
        Write::Sent(&FILLER[..7]),
    ];
    let wire = [&b"{}\n"[..], &FILLER, b"\n", &FILLER[..7], b"\n"].concat();
    check_write(&frames, &wire).await;
}

#[tokio::test]
async fn frame_with_a_line_break_is_refused() {
    check_write(
        &[
            Write::Sent(b"{\"a\":1}"),
            Write::Refused(b"{}\n{}"),
            Write::Refused(b"{}\n"),
            Write::Refused(b"{}\r"),
            Write::Sent(b"{\"b\":2}"),
        ],
        b"{\"a\":1}\n{\"b\":2}\n",
    )
    .await;
}

#[tokio::test]
async fn pieces_are_written_as_one_line() {
    // Small pieces go into the buffer; pieces larger than the buffer and the pipe go out
    // in as many writes as the peer takes, each piece whole and in order.
    let frames = [
        Write::Sent(b"{}"),
        Write::Pieces([b"{\"id\":1,\"result\":", b"{\"a\":1}", b"}"]),
        Write::Pieces([b"[", &FILLER, b"]"]),
        Write::Pieces([&FILLER[..5], b"", &FILLER[..3]]),
        Write::Sent(b"{\"b\":2}"),
    ];
    let wire = [
        &b"{}\n{\"id\":1,\"result\":{\"a\":1}}\n["[..],
        &FILLER,
        b"]\n",
        &FILLER[..5],
        &FILLER[..3],
        b"\n{\"b\":2}\n",
    ]
    .concat();
    check_write(&frames, &wire).await;
}

#[tokio::test]
async fn pieces_with_a_line_break_are_refused_whole() {
    // A break in any piece refuses the line before any piece of it is written.
    check_write(
        &[
            Write::RefusedPieces([b"{\"a\":", b"1\n", b"}"]),
            Write::RefusedPieces([b"{\r", b"", b"}"]),
            Write::RefusedPieces([b"[", &FILLER, b"]\n"]),
            Write::Pieces([b"{\"a\":", b"1", b"}"]),
        ],
        b"{\"a\":1}\n",
    )
    .await;
}

#[tokio::test]
async fn close_without_frames_is_eof() {
    check_write(&[], b"").await;
}

/// A writer into `near` with `timeout`, holding a 1 KiB frame it has buffered but not
/// yet flushed.
async fn writer_holding_a_kilobyte(
    near: DuplexStream,
    timeout: impl Into<Option<Duration>>,
) -> LineWriter<DuplexStream> {
    let mut writer = LineWriter::with_write_timeout(near, timeout);
    writer
        .write_frame(Bytes::from_static(&FILLER[..1024]))
        .await
        .expect("buffered");
    writer
}

#[tokio::test(start_paused = true)]
async fn write_timeout_fires_when_the_peer_never_reads() {
    // The other end stays open but is never read, so the 64-byte pipe fills up.
    let (near, _far) = tokio::io::duplex(64);
    let start = tokio::time::Instant::now();
    // The frame fits the buffer; the flush is what must reach the peer.
    let mut writer = writer_holding_a_kilobyte(near, Duration::from_secs(5)).await;
    let result = writer.flush().await;
    assert!(
        matches!(result, Err(TransportError::WriteTimeout(limit)) if limit == Duration::from_secs(5)),
        "{result:?}",
    );
    assert_eq!(start.elapsed(), Duration::from_secs(5));
    // Part of the line may be on the wire, so nothing may follow it.
    let next = writer.write_frame(Bytes::from_static(b"{}")).await;
    assert!(
        matches!(next, Err(TransportError::Closed(Some(_)))),
        "{next:?}"
    );
    writer.close().await.expect("a broken writer still closes");
}

#[tokio::test(start_paused = true)]
async fn a_write_stalled_just_under_the_timeout_goes_through() {
    // The peer reads nothing for 4.999 s of the 5 s, then drains the pipe.
    let (near, mut far) = tokio::io::duplex(64);
    let stall = Duration::from_millis(4999);
    let drain = tokio::spawn(async move {
        tokio::time::sleep(stall).await;
        let mut read = Vec::new();
        far.read_to_end(&mut read).await.expect("read the pipe");
        read
    });
    let start = tokio::time::Instant::now();
    let mut writer = writer_holding_a_kilobyte(near, Duration::from_secs(5)).await;
    writer.flush().await.expect("drained before the timeout");
    assert_eq!(start.elapsed(), stall);
    // The writer is still open: a second frame goes through at once.
    writer
        .write_frame(Bytes::from_static(b"{}"))
        .await
        .expect("still open");
    writer.close().await.expect("close succeeds");
    let mut expected = FILLER[..1024].to_vec();
    expected.extend_from_slice(b"\n{}\n");
    assert_eq!(drain.await.expect("the drain task"), expected);
}

#[tokio::test(start_paused = true)]
async fn no_write_timeout_waits_for_the_peer() {
    let (near, _far) = tokio::io::duplex(64);
    let mut writer = writer_holding_a_kilobyte(near, None).await;
    assert_eq!(writer.write_timeout(), None);
    let waited = tokio::time::timeout(Duration::from_hours(1), writer.flush()).await;
    assert!(waited.is_err(), "the write is still waiting after an hour");
}

#[tokio::test]
async fn writer_output_reads_back_and_close_is_eof() {
    let (near, far) = tokio::io::duplex(4096);
    let mut writer = LineWriter::new(near);
    let mut reader = LineReader::new(far);
    for frame in [&b"{\"a\":1}"[..], b"\xff", b"{\"b\":2}"] {
        writer
            .write_frame(Bytes::from_static(frame))
            .await
            .expect("the duplex has room");
        writer.flush().await.expect("the duplex has room");
        let Some(Ok(read)) = reader.read_frame().await else {
            panic!("expected a frame");
        };
        assert_eq!(read, frame);
    }
    writer.close().await.expect("close succeeds");
    assert!(reader.read_frame().await.is_none());
}

/// Reads what `far` holds right now, without waiting.
fn available(far: &mut DuplexStream) -> Vec<u8> {
    let mut buf = vec![0; 8192];
    let mut read = ReadBuf::new(&mut buf);
    let waker = std::task::Waker::noop();
    match Pin::new(far).poll_read(&mut Context::from_waker(waker), &mut read) {
        Poll::Ready(result) => result.expect("the duplex does not fail"),
        Poll::Pending => {}
    }
    read.filled().to_vec()
}

#[tokio::test]
async fn write_now_sends_a_line_at_once_when_idle() {
    let (near, mut far) = tokio::io::duplex(4096);
    let mut writer = LineWriter::new(near);
    assert_eq!(writer.write_now(b"{\"a\":1}"), WriteNow::Sent);
    assert_eq!(writer.write_now(b"{\"b\":2}"), WriteNow::Sent);
    // On the wire without a flush, each with its newline.
    assert_eq!(available(&mut far), b"{\"a\":1}\n{\"b\":2}\n");
}

#[tokio::test]
async fn write_now_leaves_what_the_pipe_refuses_for_the_flush() {
    // A 64-byte pipe takes 64 of the 101 bytes; the rest wait in the buffer.
    let (near, mut far) = tokio::io::duplex(64);
    let mut writer = LineWriter::new(near);
    assert_eq!(writer.write_now(&FILLER[..100]), WriteNow::Buffered);
    // With bytes waiting in the buffer, nothing more is taken now.
    assert_eq!(writer.write_now(b"{}"), WriteNow::Later);
    let mut read = available(&mut far);
    assert_eq!(read.len(), 64);
    let drain = tokio::spawn(async move {
        far.read_to_end(&mut read).await.expect("read the pipe");
        read
    });
    writer.flush().await.expect("the rest is flushed");
    writer.write_frame(Bytes::from_static(b"{}")).await.unwrap();
    writer.close().await.expect("close succeeds");
    let mut expected = FILLER[..100].to_vec();
    expected.extend_from_slice(b"\n{}\n");
    assert_eq!(drain.await.expect("the drain task"), expected);
}

#[tokio::test]
async fn write_now_declines_what_write_frame_must_judge() {
    let (near, mut far) = tokio::io::duplex(1 << 20);
    let mut writer = LineWriter::new(near);
    // A line break: `write_frame` refuses it with its error.
    assert_eq!(writer.write_now(b"{}\n{}"), WriteNow::Later);
    assert_eq!(writer.write_now(b"{}\r"), WriteNow::Later);
    // A line the buffer cannot hold: `write_frame` writes it, within the timeout.
    let long = vec![b'x'; 64 * 1024];
    assert_eq!(writer.write_now(&long), WriteNow::Later);
    // Something buffered and not flushed: it must go first.
    writer.write_frame(Bytes::from_static(b"{}")).await.unwrap();
    assert_eq!(writer.write_now(b"{}"), WriteNow::Later);
    writer.flush().await.unwrap();
    assert_eq!(available(&mut far), b"{}\n");
    // Closed: nothing more is taken.
    writer.close().await.unwrap();
    assert_eq!(writer.write_now(b"{}"), WriteNow::Later);
}

#[tokio::test]
async fn a_failed_write_now_is_reported_by_the_flush() {
    let (near, far) = tokio::io::duplex(4096);
    drop(far);
    let mut writer = LineWriter::new(near);
    assert_eq!(writer.write_now(b"{}"), WriteNow::Buffered);
    // The flush reports the write's own error, then the writer stays broken.
    let flushed = writer.flush().await;
    assert!(
        matches!(&flushed, Err(TransportError::Io(e)) if e.kind() == io::ErrorKind::BrokenPipe),
        "{flushed:?}"
    );
    let again = writer.flush().await;
    assert!(
        matches!(again, Err(TransportError::Closed(Some(_)))),
        "{again:?}"
    );
    assert_eq!(writer.write_now(b"{}"), WriteNow::Later);
}

#[tokio::test]
async fn defaults() {
    let (reader, writer) = stdio();
    assert_eq!(reader.max_line(), 4 * 1024 * 1024);
    assert_eq!(DEFAULT_MAX_LINE, 4 * 1024 * 1024);
    assert_eq!(writer.write_timeout(), Some(DEFAULT_WRITE_TIMEOUT));
    assert_eq!(DEFAULT_WRITE_TIMEOUT, Duration::from_secs(30));
}
