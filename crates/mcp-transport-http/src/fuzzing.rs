//! Entry points for the fuzz targets of `fuzz/` (feature `fuzzing`). Not part of the API:
//! hidden from the docs, exempt from semver, and only what a target needs to reach
//! parsers that are private to this crate.

/// A server's connection handling without its listener: each stream given to
/// [`serve`](Connections::serve) is served as `HttpServer` serves an accepted TCP
/// connection (hyper's server connection, with the server's head limit, chunked-body
/// rule and write timeout), so that a target can drive it over an in-memory stream.
pub struct Connections<E> {
    settings: std::sync::Arc<crate::server::Settings<E>>,
}

impl<E: crate::Endpoint> Connections<E> {
    /// Connections of `endpoint` with the limits and timeouts of `config`.
    ///
    /// # Errors
    /// [`Error::Config`](crate::Error::Config) if `config` is not valid.
    pub fn new(endpoint: E, config: &crate::HttpServerConfig) -> Result<Self, crate::Error> {
        config.validate()?;
        Ok(Connections {
            settings: std::sync::Arc::new(crate::server::Settings::new(endpoint, config)),
        })
    }

    /// Serves one connection over `io` to its end, as if accepted from 127.0.0.1:1.
    pub fn serve<I>(&self, io: I) -> impl Future<Output = ()> + Send + 'static + use<E, I>
    where
        I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let peer = std::net::SocketAddr::from(([127, 0, 0, 1], 1));
        crate::server::serve_io(
            &self.settings,
            io,
            mcp_jsonrpc::CancellationToken::new(),
            peer,
        )
    }
}

use crate::client::sse::SseParser;

pub use crate::client::SseEvent;

/// One event was larger than the parser's bound; the stream is abandoned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooLarge;

/// The client's `text/event-stream` parser, in raw mode (every event whole) or message
/// mode (the `data` of each `message` event).
#[derive(Debug)]
pub struct Sse {
    parser: SseParser,
    raw: bool,
}

impl Sse {
    /// A parser for events of at most `max_event` bytes.
    #[must_use]
    pub fn new(max_event: usize, raw: bool) -> Self {
        let parser = if raw {
            SseParser::raw(max_event)
        } else {
            SseParser::new(max_event)
        };
        Sse { parser, raw }
    }

    /// Feeds one chunk of the body.
    ///
    /// # Errors
    /// [`TooLarge`] when an event outgrew the bound.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<(), TooLarge> {
        self.parser.feed(chunk).map_err(|_| TooLarge)
    }

    /// Takes every complete event so far: `(event, data, id)` in raw mode, `("message",
    /// data, None)` in message mode.
    pub fn take(&mut self) -> Vec<(String, Vec<u8>, Option<String>)> {
        let mut out = Vec::new();
        if self.raw {
            while let Some(event) = self.parser.next_raw() {
                out.push((event.event, event.data.into_bytes(), event.id));
            }
        } else {
            while let Some(data) = self.parser.next_event() {
                out.push(("message".to_owned(), data.to_vec(), None));
            }
        }
        out
    }
}
