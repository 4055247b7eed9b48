//! What the scripted legacy Streamable HTTP servers of `client_http_session.rs` and
//! `client_http_limits.rs` share: the body of the standalone GET stream and the header
//! reader (<https://modelcontextprotocol.io/specification/2025-06-18/basic/transports>).

use std::pin::Pin;
use std::task::{Context, Poll};

use axum::http::HeaderMap;
use bytes::Bytes;
use tokio::sync::mpsc;

/// A body fed by a channel: the standalone GET stream, open until the sender is dropped.
pub(crate) struct ChannelBody(pub(crate) mpsc::Receiver<Bytes>);

impl http_body::Body for ChannelBody {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, Self::Error>>> {
        self.0
            .poll_recv(cx)
            .map(|chunk| chunk.map(|c| Ok(http_body::Frame::data(c))))
    }
}

/// The header `name` as text, or `-` when it is absent or not text.
pub(crate) fn header(headers: &HeaderMap, name: &str) -> String {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("-")
        .to_owned()
}
