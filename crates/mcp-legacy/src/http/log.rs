//! One resumable SSE stream of a legacy session: the messages sent on it, kept in order
//! with their sequence numbers, independent of the HTTP connection that carries them
//! (<https://modelcontextprotocol.io/specification/2025-11-25/basic/transports>, Resumability and Redelivery).
//!
//! A writer appends JSON-RPC frames; a reader (the body of a POST or GET response)
//! sends them as SSE events whose id is `<stream>-<seq>`, so a `Last-Event-ID` names both
//! the stream and the place to resume from. A connection that breaks loses nothing: the
//! next reader starts after the last id its client saw. One reader at a time: a new one
//! (a resumption) supersedes the old, so no message goes out on two streams.
//!
//! Bounded: a writer waits while [`MAX_UNDELIVERED`] frames are unsent (a request's
//! stream) or drops the oldest (the session's GET stream of change notifications, where
//! a client that does not listen must not hold the server up), and at most
//! [`RETAINED`] sent frames are kept for replay.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::{BufMut, Bytes, BytesMut};
use futures_util::stream::{self, Stream};
use http_body::Frame;
use tokio::sync::Notify;

use crate::session::lock;

/// How many frames may wait for a reader before a writer waits (or, on a lossy stream,
/// the oldest is dropped).
pub(crate) const MAX_UNDELIVERED: usize = 256;
/// How many sent frames are kept for a client that resumes.
pub(crate) const RETAINED: usize = 64;

/// One stream's messages; see the [module docs](self).
#[derive(Debug)]
pub(crate) struct EventLog {
    stream: u64,
    lossy: bool,
    /// Where each frame is also written, with its number, for another instance to replay
    /// (a session kept in Redis); `None` for a session of this instance only.
    #[cfg(feature = "session-redis")]
    mirror: Option<super::store::Mirror>,
    state: Mutex<State>,
    changed: Notify,
}

#[derive(Debug)]
struct State {
    /// The sequence number of `frames[0]`; numbers start at 1 (0 is the priming event).
    first: u64,
    frames: VecDeque<Bytes>,
    /// The highest sequence number a reader has taken.
    delivered: u64,
    /// No frame will follow.
    finished: bool,
    /// The reconnection delay each reader sends last, when the stream was finished by
    /// the server's shutdown ([`EventLog::suspend`]).
    retry: Option<Duration>,
    /// The generation of the reader attached now, 0 for none.
    reader: u64,
    generations: u64,
}

impl State {
    fn next(&self) -> u64 {
        self.first + self.frames.len() as u64
    }

    /// How many kept frames no reader has taken.
    fn undelivered(&self) -> usize {
        let highest = self.next() - 1;
        usize::try_from(highest.saturating_sub(self.delivered))
            .unwrap_or(usize::MAX)
            .min(self.frames.len())
    }

    /// Drops sent frames beyond what is kept for replay.
    fn trim(&mut self) {
        while self.frames.len() > self.undelivered() + RETAINED {
            self.frames.pop_front();
            self.first += 1;
        }
    }
}

impl EventLog {
    /// A stream numbered `stream` within its session; a `lossy` one drops its oldest
    /// frames instead of making writers wait.
    pub(crate) fn new(stream: u64, lossy: bool) -> Arc<Self> {
        Self::mirrored(
            stream,
            lossy,
            #[cfg(feature = "session-redis")]
            None,
        )
    }

    /// [`new`](Self::new), each frame also handed to `mirror` (feature `session-redis`).
    pub(crate) fn mirrored(
        stream: u64,
        lossy: bool,
        #[cfg(feature = "session-redis")] mirror: Option<super::store::Mirror>,
    ) -> Arc<Self> {
        Arc::new(EventLog {
            stream,
            lossy,
            #[cfg(feature = "session-redis")]
            mirror,
            state: Mutex::new(State {
                first: 1,
                frames: VecDeque::new(),
                delivered: 0,
                finished: false,
                retry: None,
                reader: 0,
                generations: 0,
            }),
            changed: Notify::new(),
        })
    }

    pub(crate) fn stream(&self) -> u64 {
        self.stream
    }

    /// Hands the frame about to be appended to the mirror, under the state's lock so that
    /// the mirror gets the frames in their order.
    #[cfg(feature = "session-redis")]
    fn mirror(&self, state: &State, frame: &Bytes) {
        if let Some(mirror) = &self.mirror {
            mirror.send(self.stream, state.next(), frame);
        }
    }

    /// Appends a frame, waiting while too many are unsent (never on a lossy stream).
    /// `last` also finishes the stream, in the same step.
    pub(crate) async fn append(&self, frame: Bytes, last: bool) {
        loop {
            let notified = self.changed.notified();
            let mut notified = std::pin::pin!(notified);
            notified.as_mut().enable();
            {
                let mut state = lock(&self.state);
                if state.finished {
                    return;
                }
                if self.lossy || last || state.undelivered() < MAX_UNDELIVERED {
                    #[cfg(feature = "session-redis")]
                    self.mirror(&state, &frame);
                    state.frames.push_back(frame);
                    state.finished = last;
                    if self.lossy && state.undelivered() > MAX_UNDELIVERED {
                        state.frames.pop_front();
                        state.first += 1;
                    }
                    state.trim();
                    drop(state);
                    self.changed.notify_waiters();
                    return;
                }
            }
            notified.await;
        }
    }

    /// Appends without waiting, dropping the oldest unsent frame when too many are
    /// waiting (for change notifications, which must not hold the server up); `false`
    /// once the stream has finished.
    pub(crate) fn push(&self, frame: Bytes) -> bool {
        let mut state = lock(&self.state);
        if state.finished {
            return false;
        }
        #[cfg(feature = "session-redis")]
        self.mirror(&state, &frame);
        state.frames.push_back(frame);
        if state.undelivered() > MAX_UNDELIVERED {
            state.frames.pop_front();
            state.first += 1;
        }
        state.trim();
        drop(state);
        self.changed.notify_waiters();
        true
    }

    /// Ends the stream: readers end once they have sent what is there.
    pub(crate) fn finish(&self) {
        lock(&self.state).finished = true;
        self.changed.notify_waiters();
    }

    /// Ends the stream because this server is shutting down: readers send what is there,
    /// then a `retry` field with `retry`, so that the client reconnects (with
    /// `Last-Event-ID`, to another instance of a fleet) after that delay rather than its
    /// own.
    pub(crate) fn suspend(&self, retry: Duration) {
        {
            let mut state = lock(&self.state);
            state.finished = true;
            state.retry = Some(retry);
        }
        self.changed.notify_waiters();
    }

    /// Waits until the stream has a frame or has finished; then, if it holds exactly one
    /// frame, is finished and nobody has read it, takes that frame (the answer of a
    /// request that sent nothing else, for a plain JSON reply).
    pub(crate) async fn first_or_only(&self) -> Option<Bytes> {
        loop {
            let notified = self.changed.notified();
            let mut notified = std::pin::pin!(notified);
            notified.as_mut().enable();
            {
                let mut state = lock(&self.state);
                if state.finished && state.frames.len() == 1 && state.delivered == 0 {
                    state.delivered = 1;
                    return state.frames.pop_front();
                }
                if !state.frames.is_empty() || state.finished {
                    return None;
                }
            }
            notified.await;
        }
    }

    /// Whether the stream has finished and every frame went to a reader.
    pub(crate) fn drained(&self) -> bool {
        let state = lock(&self.state);
        state.finished && state.undelivered() == 0
    }

    /// Whether a reader is attached.
    pub(crate) fn has_reader(&self) -> bool {
        lock(&self.state).reader != 0
    }

    /// Whether `seq` is the number of an event this stream has sent or kept to send (0,
    /// the priming event, included): a client can resume only after one of those. A
    /// `Last-Event-ID` past them was never ours.
    pub(crate) fn has_numbered(&self, seq: u64) -> bool {
        seq < lock(&self.state).next()
    }

    /// The sequence number after which a fresh reader of the GET stream starts: what
    /// no reader has taken yet.
    pub(crate) fn delivered(&self) -> u64 {
        lock(&self.state).delivered
    }

    /// The SSE events of this stream after sequence number `after`, as a response body's
    /// frames: `priming` first if given, then each frame as `id: <stream>-<seq>`,
    /// `event: message` and its data, `: keep-alive` comments while idle, until the
    /// stream finishes, a newer reader takes over, or the connection's time is up (see
    /// [`Pacing`]; the stream goes on for the next reader).
    pub(crate) fn reader(
        self: &Arc<Self>,
        after: u64,
        priming: Option<Bytes>,
        pacing: Pacing,
    ) -> impl Stream<Item = Result<Frame<Bytes>, Infallible>> + Send + 'static {
        let generation = {
            let mut state = lock(&self.state);
            state.generations += 1;
            state.reader = state.generations;
            state.generations
        };
        // Wake a superseded reader so it ends.
        self.changed.notify_waiters();
        let reader = Reader {
            log: Arc::clone(self),
            generation,
            // `after` may come from a client's `Last-Event-ID`: never past `u64::MAX`.
            cursor: after.saturating_add(1),
            priming,
            keep_alive: pacing.keep_alive,
            deadline: pacing
                .close_after
                .map(|after| tokio::time::Instant::now() + after),
            hinted: false,
        };
        stream::unfold(reader, |mut reader| async move {
            let event = reader.next().await?;
            Some((Ok(Frame::data(event)), reader))
        })
    }
}

/// How a reader paces its connection.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Pacing {
    /// Send `: keep-alive` after this long without an event.
    pub(crate) keep_alive: Option<Duration>,
    /// End the connection (not the stream) this long after it opened, once at least one
    /// event with an id went out: the client polls with `Last-Event-ID`.
    pub(crate) close_after: Option<Duration>,
}

/// One attached reader; detaches when dropped.
struct Reader {
    log: Arc<EventLog>,
    generation: u64,
    cursor: u64,
    priming: Option<Bytes>,
    keep_alive: Option<Duration>,
    deadline: Option<tokio::time::Instant>,
    /// Whether the shutdown's retry hint went out.
    hinted: bool,
}

impl Reader {
    async fn next(&mut self) -> Option<Bytes> {
        if let Some(priming) = self.priming.take() {
            return Some(priming);
        }
        loop {
            let notified = self.log.changed.notified();
            let mut notified = std::pin::pin!(notified);
            notified.as_mut().enable();
            {
                let mut state = lock(&self.log.state);
                if state.reader != self.generation {
                    return None;
                }
                self.cursor = self.cursor.max(state.first);
                let index = usize::try_from(self.cursor - state.first).unwrap_or(usize::MAX);
                if let Some(frame) = state.frames.get(index) {
                    let event = sse_event(self.log.stream, self.cursor, frame);
                    state.delivered = state.delivered.max(self.cursor);
                    self.cursor = self.cursor.saturating_add(1);
                    state.trim();
                    drop(state);
                    // A writer may be waiting for room.
                    self.log.changed.notify_waiters();
                    return Some(event);
                }
                if state.finished {
                    return match state.retry {
                        Some(retry) if !self.hinted => {
                            self.hinted = true;
                            Some(retry_event(retry))
                        }
                        _ => None,
                    };
                }
            }
            let now = tokio::time::Instant::now();
            let keep_alive = self.keep_alive.map(|period| now + period);
            let wake = match (keep_alive, self.deadline) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            let Some(wake) = wake else {
                notified.await;
                continue;
            };
            if tokio::time::timeout_at(wake, notified).await.is_err() {
                if self
                    .deadline
                    .is_some_and(|d| d <= tokio::time::Instant::now())
                {
                    // Time to poll: the stream stays for the next reader.
                    return None;
                }
                return Some(Bytes::from_static(b": keep-alive\n\n"));
            }
        }
    }
}

impl Drop for Reader {
    fn drop(&mut self) {
        let mut state = lock(&self.log.state);
        if state.reader == self.generation {
            state.reader = 0;
        }
    }
}

/// The event that primes a client to resume (<https://modelcontextprotocol.io/specification/2025-11-25/basic/transports>,
/// Sending Messages to the Server, 6): the stream's id 0 and empty data, with the
/// reconnection delay in `retry` when one is given.
pub(crate) fn priming_event(stream: u64, retry: Option<Duration>) -> Bytes {
    let mut buf = BytesMut::with_capacity(48);
    buf.put_slice(format!("id: {stream}-0\n").as_bytes());
    if let Some(retry) = retry {
        buf.put_slice(format!("retry: {}\n", retry.as_millis()).as_bytes());
    }
    buf.put_slice(b"data: \n\n");
    buf.freeze()
}

/// A `retry` field alone: it sets the client's reconnection delay and dispatches nothing.
fn retry_event(retry: Duration) -> Bytes {
    Bytes::from(format!("retry: {}\n\n", retry.as_millis()))
}

/// One SSE event: its id, `event: message`, one `data:` line per line of the frame.
pub(crate) fn sse_event(stream: u64, seq: u64, frame: &[u8]) -> Bytes {
    let mut buf = BytesMut::with_capacity(frame.len() + 48);
    buf.put_slice(format!("id: {stream}-{seq}\nevent: message\n").as_bytes());
    for line in frame.split(|&b| b == b'\n') {
        buf.put_slice(b"data: ");
        buf.put_slice(line.strip_suffix(b"\r").unwrap_or(line));
        buf.put_u8(b'\n');
    }
    buf.put_u8(b'\n');
    buf.freeze()
}

/// Reads a `Last-Event-ID` of this server: `<stream>-<seq>`, two decimal numbers that fit
/// in `u64`. Anything else (a sign, spaces, an empty or out-of-range number) is not one of
/// ours: `None`, never a wrapped or clamped number.
pub(crate) fn parse_event_id(id: &str) -> Option<(u64, u64)> {
    let (stream, seq) = id.split_once('-')?;
    Some((number(stream)?, number(seq)?))
}

/// A decimal number of digits only (`str::parse` would also take a leading `+`).
fn number(text: &str) -> Option<u64> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::StreamExt;

    fn data(frame: &Frame<Bytes>) -> String {
        String::from_utf8(frame.data_ref().unwrap().to_vec()).unwrap()
    }

    #[tokio::test]
    async fn a_resumed_reader_gets_what_followed_the_last_id_and_supersedes_the_old() {
        let log = EventLog::new(3, false);
        log.append(Bytes::from_static(b"{\"a\":1}"), false).await;
        log.append(Bytes::from_static(b"{\"a\":2}"), false).await;
        let mut first = Box::pin(log.reader(0, Some(priming_event(3, None)), Pacing::default()));
        assert_eq!(
            data(&first.next().await.unwrap().unwrap()),
            "id: 3-0\ndata: \n\n"
        );
        assert_eq!(
            data(&first.next().await.unwrap().unwrap()),
            "id: 3-1\nevent: message\ndata: {\"a\":1}\n\n"
        );
        // The connection breaks after 3-1; the client resumes from there.
        let second = Box::pin(log.reader(1, None, Pacing::default()));
        assert!(first.next().await.is_none(), "the old reader is superseded");
        log.append(Bytes::from_static(b"{\"a\":3}"), true).await;
        let rest: Vec<String> = second.map(|f| data(&f.unwrap())).collect().await;
        assert_eq!(
            rest,
            [
                "id: 3-2\nevent: message\ndata: {\"a\":2}\n\n",
                "id: 3-3\nevent: message\ndata: {\"a\":3}\n\n"
            ]
        );
        assert!(log.drained());
    }

    #[tokio::test]
    async fn a_lone_final_frame_is_taken_whole_for_a_json_reply() {
        let log = EventLog::new(1, false);
        log.append(Bytes::from_static(b"{}"), true).await;
        assert_eq!(log.first_or_only().await.as_deref(), Some(&b"{}"[..]));

        let log = EventLog::new(2, false);
        log.append(Bytes::from_static(b"{\"n\":1}"), false).await;
        assert_eq!(
            log.first_or_only().await,
            None,
            "a notification came first: SSE"
        );
    }

    #[tokio::test]
    async fn a_lossy_stream_keeps_the_newest_and_a_strict_one_makes_the_writer_wait() {
        let log = EventLog::new(0, true);
        for n in 0..(MAX_UNDELIVERED + 10) {
            log.push(Bytes::from(n.to_string()));
        }
        let mut reader = Box::pin(log.reader(0, None, Pacing::default()));
        let first = data(&reader.next().await.unwrap().unwrap());
        assert_eq!(first, "id: 0-11\nevent: message\ndata: 10\n\n");

        let log = EventLog::new(1, false);
        for n in 0..MAX_UNDELIVERED {
            log.append(Bytes::from(n.to_string()), false).await;
        }
        let blocked = tokio::time::timeout(
            Duration::from_millis(50),
            log.append(Bytes::from_static(b"x"), false),
        )
        .await;
        assert!(blocked.is_err(), "the writer waits for a reader");
        let mut reader = Box::pin(log.reader(0, None, Pacing::default()));
        reader.next().await.unwrap().unwrap();
        tokio::time::timeout(
            Duration::from_secs(1),
            log.append(Bytes::from_static(b"x"), false),
        )
        .await
        .expect("room again after one frame is read");
    }

    #[test]
    fn event_ids_name_the_stream_and_the_place() {
        assert_eq!(parse_event_id("12-7"), Some((12, 7)));
        assert_eq!(parse_event_id("12"), None);
        assert_eq!(parse_event_id("a-1"), None);
        assert_eq!(
            parse_event_id("1-18446744073709551615"),
            Some((1, u64::MAX)),
            "u64::MAX itself is a number; the stream says whether it was sent"
        );
        for malformed in [
            "1-18446744073709551616",
            "18446744073709551616-1",
            "1-99999999999999999999999",
            "+1-2",
            "1-+2",
            "1--2",
            "-1",
            "1-",
            " 1-2",
            "1-2 ",
            "1-2-3",
        ] {
            assert_eq!(parse_event_id(malformed), None, "{malformed}");
        }
    }

    #[tokio::test]
    async fn only_numbers_the_stream_gave_can_be_resumed_after() {
        let log = EventLog::new(1, false);
        assert!(log.has_numbered(0), "the priming event");
        assert!(!log.has_numbered(1));
        log.append(Bytes::from_static(b"{}"), false).await;
        assert!(log.has_numbered(1));
        assert!(!log.has_numbered(2));
        assert!(!log.has_numbered(u64::MAX));
        // A reader after the last number there can be is empty, not a panic.
        let mut reader = Box::pin(log.reader(u64::MAX, None, Pacing::default()));
        log.finish();
        assert!(reader.next().await.is_none());
    }
}
