//! Reading a request body under a size limit that is enforced while reading.
//!
//! The limit counts the bytes actually received, whatever `Content-Length` says: a body
//! that would pass it stops being read at the chunk that crosses it, and nothing past the
//! limit is ever buffered. The caller answers `413`; hyper then closes the connection,
//! because the unread rest of the body cannot be skipped safely.

use bytes::{Buf, Bytes, BytesMut};
use http_body::Body;
use http_body_util::BodyExt as _;

/// Why a body could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BodyError {
    /// More than the limit arrived.
    TooLarge,
    /// The client's stream failed (it reset the connection, or sent a malformed chunk).
    Aborted,
}

/// Reads the whole body, refusing it as soon as more than `limit` bytes have arrived.
/// `expected` is the `Content-Length`, used only to size the buffer.
pub(crate) async fn read_limited<B>(
    body: B,
    limit: usize,
    expected: Option<usize>,
) -> Result<Bytes, BodyError>
where
    B: Body,
    B::Data: Buf,
{
    let mut body = std::pin::pin!(body);
    // The usual body arrives as one chunk: keep it as it is, copying nothing.
    let mut first: Option<Bytes> = None;
    let mut rest: Option<BytesMut> = None;
    let mut total = 0usize;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|_| BodyError::Aborted)?;
        let Ok(mut data) = frame.into_data() else {
            continue; // Trailers carry nothing for us.
        };
        let len = data.remaining();
        total = total.checked_add(len).ok_or(BodyError::TooLarge)?;
        if total > limit {
            return Err(BodyError::TooLarge);
        }
        if len == 0 {
            continue;
        }
        match (&mut first, &mut rest) {
            (None, _) => first = Some(data.copy_to_bytes(len)),
            (Some(head), None) => {
                let capacity = expected.unwrap_or(0).clamp(head.len() + len, limit);
                let mut buf = BytesMut::with_capacity(capacity);
                buf.extend_from_slice(head);
                buf.put_buf(&mut data);
                rest = Some(buf);
            }
            (Some(_), Some(buf)) => buf.put_buf(&mut data),
        }
    }
    Ok(match (first, rest) {
        (_, Some(buf)) => buf.freeze(),
        (Some(head), None) => head,
        (None, None) => Bytes::new(),
    })
}

trait PutBuf {
    fn put_buf(&mut self, data: &mut impl Buf);
}

impl PutBuf for BytesMut {
    fn put_buf(&mut self, data: &mut impl Buf) {
        while data.has_remaining() {
            let chunk = data.chunk();
            let n = chunk.len();
            self.extend_from_slice(chunk);
            data.advance(n);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;

    use futures_util::stream;
    use http_body::Frame;
    use http_body_util::{Full, StreamBody};

    use super::*;

    /// A body that yields the given chunks, one frame each.
    fn chunks(
        parts: &[&'static [u8]],
    ) -> StreamBody<impl futures_util::Stream<Item = Result<Frame<Bytes>, Infallible>>> {
        let frames: Vec<_> = parts
            .iter()
            .map(|c| Ok(Frame::data(Bytes::from_static(c))))
            .collect();
        StreamBody::new(stream::iter(frames))
    }

    fn run<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(f)
    }

    #[test]
    fn limits() {
        let one = run(read_limited(
            Full::new(Bytes::from_static(b"abc")),
            3,
            Some(3),
        ));
        assert_eq!(one.unwrap(), Bytes::from_static(b"abc"));
        let over = run(read_limited(
            Full::new(Bytes::from_static(b"abcd")),
            3,
            None,
        ));
        assert_eq!(over.unwrap_err(), BodyError::TooLarge);
        let joined = run(read_limited(chunks(&[b"ab", b"", b"cd", b"e"]), 5, None));
        assert_eq!(joined.unwrap(), Bytes::from_static(b"abcde"));
        let crossing = run(read_limited(
            chunks(&[b"ab", b"cd", b"ef"]),
            5,
            Some(1 << 30),
        ));
        assert_eq!(crossing.unwrap_err(), BodyError::TooLarge);
        let empty = run(read_limited(chunks(&[]), 5, None));
        assert!(empty.unwrap().is_empty());
    }
}
