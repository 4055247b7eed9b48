//! `line_codec`: fuzzes `LineReader`: arbitrary bytes, split into arbitrary reads, must frame exactly as
//! a simple model of the rules says, without panicking, waiting or growing unbounded.
//!
//! The input's first byte says how many of the following bytes are read sizes (0 to 15,
//! each 1 to 256, used in turn); the rest is the stream the reader sees.

use std::io;
use std::pin::{Pin, pin};
use std::task::{Context, Poll, Waker};

use bytes::Bytes;
use mcp_jsonrpc::{FrameReader, TransportError};
use mcp_transport_stdio::LineReader;
use tokio::io::{AsyncRead, ReadBuf};

/// A small limit, so that over-long lines are common.
const MAX: usize = 64;

/// What the reader may hold beyond `MAX`: one read chunk and change.
const SLACK: usize = 128 * 1024;

/// An in-memory stream handed out in reads of the sizes the input chose.
struct Chunked {
    data: Bytes,
    sizes: Vec<usize>,
    next: usize,
}

impl AsyncRead for Chunked {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let size = match self.sizes.get(self.next % self.sizes.len().max(1)) {
            Some(&size) => size,
            None => self.data.len(),
        };
        self.next += 1;
        let n = size.min(self.data.len()).min(buf.remaining());
        let chunk = self.data.split_to(n);
        buf.put_slice(&chunk);
        Poll::Ready(Ok(()))
    }
}

#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    Frame(Bytes),
    TooLong,
}

/// The framing rules applied to the whole stream at once: split at `\n`, strip one `\r`,
/// refuse what is longer than `MAX`, skip what is blank. A last line without a newline is
/// a line like any other.
fn model(stream: &[u8]) -> Vec<Outcome> {
    let mut outcomes = Vec::new();
    for line in stream.split(|&byte| byte == b'\n') {
        let content = line.strip_suffix(b"\r").unwrap_or(line);
        if content.len() > MAX {
            outcomes.push(Outcome::TooLong);
        } else if !content
            .iter()
            .all(|byte| matches!(byte, b' ' | b'\t' | b'\r'))
        {
            outcomes.push(Outcome::Frame(Bytes::copy_from_slice(content)));
        }
    }
    outcomes
}

/// One input: see the module docs.
pub fn run(input: &[u8]) {
    let Some((&count, rest)) = input.split_first() else {
        return;
    };
    let (sizes, stream) = rest.split_at(usize::from(count % 16).min(rest.len()));
    let chunked = Chunked {
        data: Bytes::copy_from_slice(stream),
        sizes: sizes.iter().map(|&size| usize::from(size) + 1).collect(),
        next: 0,
    };
    let mut reader = LineReader::with_max_line(chunked, MAX);
    // Nothing here can wait, so every read completes on its first poll.
    let mut cx = Context::from_waker(Waker::noop());
    let mut got = Vec::new();
    loop {
        let Poll::Ready(item) = pin!(reader.read_frame()).poll(&mut cx) else {
            panic!("an in-memory read never waits");
        };
        assert!(
            reader.buffered_capacity() <= MAX + SLACK,
            "the buffer is bounded"
        );
        match item {
            None => break,
            Some(Ok(frame)) => {
                assert!(frame.len() <= MAX, "a frame is within the limit");
                assert!(!frame.contains(&b'\n'), "a frame is one line");
                got.push(Outcome::Frame(frame));
            }
            Some(Err(TransportError::FrameTooLong { limit })) => {
                assert_eq!(limit, MAX);
                got.push(Outcome::TooLong);
            }
            Some(Err(other)) => panic!("unexpected error {other:?}"),
        }
        assert!(got.len() <= stream.len() + 1, "the reader makes progress");
    }
    let Poll::Ready(None) = pin!(reader.read_frame()).poll(&mut cx) else {
        panic!("the end is final");
    };

    let expected = model(stream);
    if !expected.contains(&Outcome::TooLong) {
        // Without over-long lines, the frames are exactly the non-blank lines.
        let frames: Vec<u8> = got
            .iter()
            .filter_map(|outcome| match outcome {
                Outcome::Frame(frame) => Some(&frame[..]),
                Outcome::TooLong => None,
            })
            .collect::<Vec<_>>()
            .join(&b'\n');
        let lines: Vec<u8> = stream
            .split(|&byte| byte == b'\n')
            .map(|line| line.strip_suffix(b"\r").unwrap_or(line))
            .filter(|line| !line.iter().all(|byte| matches!(byte, b' ' | b'\t' | b'\r')))
            .collect::<Vec<_>>()
            .join(&b'\n');
        assert_eq!(frames, lines);
    }
    assert_eq!(
        got, expected,
        "framing does not depend on how reads are split"
    );
}
