//! The reply to one request, read as it arrives: one JSON message, or the events of an SSE
//! stream, each decoded by `mcp-jsonrpc`, or, for a caller that parses the result itself,
//! a successful response handed over as its id and result ([`Reply::Result`]).
//!
//! Bounds: the whole body is counted against `max_response_bytes` and each SSE event against
//! `max_event_bytes`, while reading; past either, the stream yields one error and ends, and
//! its connection is closed. A JSON body announcing a larger `Content-Length` is refused
//! before it is read.

use super::pool::Body;
use bytes::{Bytes, BytesMut};
use http::StatusCode;
use http_body::Body as _;
use http_body_util::BodyExt as _;
use mcp_jsonrpc::{DecodeOptions, Decoded, ErrorObject, Message, RawResult, Response};
use mcp_types::RequestId;

use super::Limits;
use super::sse::SseParser;
use crate::error::Error;

/// The messages the server sends for one request, in order: for an SSE reply, every
/// notification as it arrives and then the response; for a JSON reply, the response alone.
///
/// Dropping the stream before its end closes the connection, which is how a Streamable
/// HTTP client cancels a request. Reading it until [`next`](Self::next) returns `None`
/// leaves the connection in the pool for the next call.
#[derive(Debug)]
pub struct ResponseStream {
    body: Body,
    state: State,
    limits: Limits,
    /// Body bytes read so far.
    received: usize,
}

#[derive(Debug)]
enum State {
    /// A JSON reply, with its status: a success, or an error status whose body should be a
    /// JSON-RPC error response.
    Json(StatusCode),
    /// An SSE reply before its response.
    Sse(Box<SseParser>),
    /// The response has been yielded; the rest of the stream is read and dropped.
    Draining,
    Done,
}

/// One message of a reply, as [`ResponseStream::next_reply`] yields it.
#[derive(Debug)]
#[non_exhaustive]
pub enum Reply {
    /// A message: a notification, a request, or an error response (or, from
    /// [`ResponseStream::next`], any response).
    Message(Message),
    /// A successful response to a request with an id: that id and its result, checked
    /// JSON ([`RawResult`]).
    Result(RequestId, RawResult),
}

impl Reply {
    /// The message, a result put back into its response: what [`ResponseStream::next`]
    /// yields.
    pub fn into_message(self) -> Result<Message, Error> {
        match self {
            Reply::Message(message) => Ok(message),
            Reply::Result(id, result) => {
                let result = result
                    .into_raw_value()
                    .map_err(|e| Error::Body(Box::new(e)))?;
                Ok(Message::Response(Response::new(Some(id), Ok(result))))
            }
        }
    }
}

impl ResponseStream {
    pub(super) fn json(status: StatusCode, body: Body, limits: Limits) -> Self {
        ResponseStream {
            body,
            state: State::Json(status),
            limits,
            received: 0,
        }
    }

    pub(super) fn sse(body: Body, limits: Limits) -> Self {
        ResponseStream {
            body,
            state: State::Sse(Box::new(SseParser::new(limits.event))),
            limits,
            received: 0,
        }
    }

    /// The next message, or `None` once the reply has ended.
    ///
    /// An error ends the stream, except [`Error::Decode`] for one SSE event, after which
    /// the stream goes on. An SSE stream that ends without a response yields
    /// [`Error::Incomplete`].
    ///
    /// Cancel safety: dropping the future loses no message, except that a message whose
    /// bytes were partly read stays buffered for the next call.
    pub async fn next(&mut self) -> Option<Result<Message, Error>> {
        self.read(false)
            .await
            .map(|reply| reply.and_then(Reply::into_message))
    }

    /// [`next`](Self::next), but a successful response to a request with an id comes as
    /// [`Reply::Result`], its id and result, for a caller that parses the result into its
    /// own type. Everything else is as [`next`](Self::next) says.
    pub async fn next_reply(&mut self) -> Option<Result<Reply, Error>> {
        self.read(true).await
    }

    /// The next message; with `as_result`, a successful response as [`Reply::Result`].
    async fn read(&mut self, as_result: bool) -> Option<Result<Reply, Error>> {
        loop {
            match &mut self.state {
                State::Done => return None,
                State::Json(status) => {
                    let status = *status;
                    self.state = State::Done;
                    return Some(self.json_message(status, as_result).await);
                }
                State::Sse(parser) => {
                    if let Some(event) = parser.next_event() {
                        let reply = reply(&event, as_result);
                        if let Ok(Reply::Result(..) | Reply::Message(Message::Response(_))) = &reply
                        {
                            self.state = State::Draining;
                        }
                        return Some(reply);
                    }
                    match self.chunk().await {
                        Ok(Some(data)) => {
                            // `self.state` is still `Sse`: only `chunk` ran in between.
                            if let State::Sse(parser) = &mut self.state
                                && parser.feed(&data).is_err()
                            {
                                self.state = State::Done;
                                return Some(Err(Error::EventTooLarge {
                                    limit: self.limits.event,
                                }));
                            }
                        }
                        Ok(None) => {
                            self.state = State::Done;
                            return Some(Err(Error::Incomplete));
                        }
                        Err(e) => {
                            self.state = State::Done;
                            return Some(Err(e));
                        }
                    }
                }
                State::Draining => {
                    // Whatever follows the response is ignored; reading to the end lets
                    // the connection be reused.
                    if !matches!(self.chunk().await, Ok(Some(_))) {
                        self.state = State::Done;
                        return None;
                    }
                }
            }
        }
    }

    /// The next data chunk of the body, counted against the body limit; `None` at its end.
    async fn chunk(&mut self) -> Result<Option<Bytes>, Error> {
        loop {
            let Some(frame) = self.body.frame().await else {
                return Ok(None);
            };
            let frame = frame.map_err(Error::Body)?;
            let Ok(data) = frame.into_data() else {
                continue; // Trailers.
            };
            self.received += data.len();
            if self.received > self.limits.body {
                return Err(Error::BodyTooLarge {
                    limit: self.limits.body,
                });
            }
            return Ok(Some(data));
        }
    }

    async fn json_message(&mut self, status: StatusCode, as_result: bool) -> Result<Reply, Error> {
        if self.body.size_hint().lower() > self.limits.body as u64 {
            return Err(Error::BodyTooLarge {
                limit: self.limits.body,
            });
        }
        // A body that arrives in one chunk (most do) is used as it is, without a copy.
        let mut body = Bytes::new();
        let mut joined: Option<BytesMut> = None;
        while let Some(data) = self.chunk().await? {
            match &mut joined {
                Some(buf) => buf.extend_from_slice(&data),
                None if body.is_empty() => body = data,
                None => {
                    let mut buf = BytesMut::with_capacity(body.len() + data.len());
                    buf.extend_from_slice(&body);
                    buf.extend_from_slice(&data);
                    joined = Some(buf);
                }
            }
            // A body of known length ends with its last bytes: nothing is left to wait for
            // (and its connection is back in the pool, see `pool::Body`).
            if self.body.is_end_stream() {
                break;
            }
        }
        let body = joined.map_or(body, BytesMut::freeze);
        json_reply(status, &body, as_result)
    }
}

/// The message of a whole JSON reply: a success's, or the JSON-RPC error response an
/// error status should carry (else [`Error::Status`]).
fn json_reply(status: StatusCode, body: &Bytes, as_result: bool) -> Result<Reply, Error> {
    if status.is_success() {
        return reply(body, as_result);
    }
    match decode(body) {
        Ok(Message::Response(response)) if response.outcome.is_err() => {
            Ok(Reply::Message(Message::Response(response)))
        }
        _ => Err(Error::Status {
            status,
            error: None,
        }),
    }
}

/// One message of a successful reply; with `as_result`, a successful response to a request
/// with an id as [`Reply::Result`].
fn reply(frame: &Bytes, as_result: bool) -> Result<Reply, Error> {
    Ok(match decode(frame)? {
        Message::Response(Response {
            id: Some(id),
            outcome: Ok(result),
            ..
        }) if as_result => Reply::Result(id, RawResult::from(result)),
        message => Reply::Message(message),
    })
}

/// Reads a whole body of at most `limit` bytes.
pub(super) async fn read_body(mut body: Body, limit: usize) -> Result<Bytes, Error> {
    if body.size_hint().lower() > limit as u64 {
        return Err(Error::BodyTooLarge { limit });
    }
    let mut buf = BytesMut::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(Error::Body)?;
        if let Ok(data) = frame.into_data() {
            if buf.len() + data.len() > limit {
                return Err(Error::BodyTooLarge { limit });
            }
            buf.extend_from_slice(&data);
        }
    }
    Ok(buf.freeze())
}

/// The JSON-RPC error of an error response body, if it is one.
pub(super) fn error_of(body: &[u8]) -> Option<ErrorObject> {
    match decode(body) {
        Ok(Message::Response(response)) => response.outcome.err(),
        _ => None,
    }
}

/// Decodes one message; a batch is not a valid reply in this revision.
fn decode(frame: &[u8]) -> Result<Message, Error> {
    match mcp_jsonrpc::decode(frame, DecodeOptions::default()) {
        Ok(Decoded::Single(message)) => Ok(message),
        // The default options refuse batches, so this arm is never taken.
        Ok(_) => Err(Error::Body(Box::from(
            "a JSON-RPC batch is not a valid reply",
        ))),
        Err(e) => Err(Error::Decode(e)),
    }
}
