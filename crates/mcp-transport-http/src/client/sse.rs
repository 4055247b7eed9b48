//! An incremental reader of `text/event-stream` bodies (the WHATWG HTML "Server-sent events"
//! parsing rules), reduced to what an MCP client needs: the `data` of each `message` event.
//!
//! Bytes are fed as they arrive, in chunks of any size; an event split across chunks, or a
//! line ending split between `\r` and `\n`, is reassembled. Lines end with `\n`, `\r\n` or
//! `\r`. Comments (`: keep-alive`), `id` and `retry` fields, unknown fields and events named
//! anything but `message` are ignored; `data` lines are joined with `\n`.
//!
//! In raw mode ([`SseParser::raw`], for [`EventStream`](super::EventStream)) every
//! dispatched event is kept whole instead: its name, its data (possibly empty, as a
//! priming event's is), the last event id and the last `retry` so far.
//!
//! Bound and recovery: one event (its pending line plus the data gathered so far) may hold at
//! most `max_event` bytes. Past that, [`SseParser::feed`] fails and the parser must not be
//! fed again: the stream is abandoned rather than resynchronised, because the dropped event
//! could be the response itself, and a response silently skipped would leave the caller
//! waiting forever.

use std::collections::VecDeque;

use bytes::Bytes;

/// The byte-order mark a stream may start with (and which the parser skips).
const BOM: &[u8] = b"\xef\xbb\xbf";

/// One event was larger than the parser's bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct EventTooLarge;

/// The parser's state between chunks.
#[derive(Debug)]
pub(crate) struct SseParser {
    max_event: usize,
    /// The current, unterminated line.
    line: Vec<u8>,
    /// The `data` of the current event, each line followed by `\n`.
    data: Vec<u8>,
    has_data: bool,
    /// The `event` field of the current event (empty means `message`).
    event: Vec<u8>,
    /// The previous chunk ended with `\r`: a `\n` starting the next one belongs to it.
    after_cr: bool,
    /// Whether the first byte that is not part of a leading BOM has been seen.
    started: bool,
    /// How many bytes of a leading BOM have been seen (it may be split across chunks).
    bom: usize,
    /// Complete `message` events not yet taken.
    ready: VecDeque<Bytes>,
    /// Raw mode: every event is kept whole, in `events`.
    raw: bool,
    /// Raw mode: complete events not yet taken.
    events: VecDeque<SseEvent>,
    /// The last event id buffer (`id` field).
    last_id: Option<String>,
    /// The last `retry` field, in milliseconds.
    retry: Option<u64>,
    /// Whether the current event had any field.
    touched: bool,
}

/// One server-sent event, whole (raw mode).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SseEvent {
    /// The event's name (`message` when the stream gave none).
    pub event: String,
    /// The event's data, its lines joined with `\n`; empty for a priming event.
    pub data: String,
    /// The stream's last event id after this event: what `Last-Event-ID` carries when the
    /// client reconnects.
    pub id: Option<String>,
    /// The stream's last `retry` field so far: how long to wait before reconnecting.
    pub retry: Option<std::time::Duration>,
}

impl SseParser {
    /// A parser for events of at most `max_event` bytes.
    pub(crate) fn new(max_event: usize) -> Self {
        SseParser {
            max_event,
            line: Vec::new(),
            data: Vec::new(),
            has_data: false,
            event: Vec::new(),
            after_cr: false,
            started: false,
            bom: 0,
            ready: VecDeque::new(),
            raw: false,
            events: VecDeque::new(),
            last_id: None,
            retry: None,
            touched: false,
        }
    }

    /// A raw-mode parser: every event kept whole ([`next_raw`](Self::next_raw)).
    pub(crate) fn raw(max_event: usize) -> Self {
        let mut parser = SseParser::new(max_event);
        parser.raw = true;
        parser
    }

    /// Takes the next complete event (raw mode).
    pub(crate) fn next_raw(&mut self) -> Option<SseEvent> {
        self.events.pop_front()
    }

    /// Takes the data of the next complete `message` event, if there is one.
    pub(crate) fn next_event(&mut self) -> Option<Bytes> {
        self.ready.pop_front()
    }

    /// Reads one chunk of the body.
    pub(crate) fn feed(&mut self, mut chunk: &[u8]) -> Result<(), EventTooLarge> {
        while !self.started
            && let Some((&first, rest)) = chunk.split_first()
        {
            if first == BOM[self.bom] {
                self.bom += 1;
                chunk = rest;
                self.started = self.bom == BOM.len();
            } else {
                // Not a BOM after all: the bytes taken for one belong to the first line.
                self.started = true;
                self.extend_line(&BOM[..self.bom])?;
            }
        }
        while let Some((&first, rest)) = chunk.split_first() {
            if self.after_cr {
                self.after_cr = false;
                if first == b'\n' {
                    chunk = rest;
                    continue;
                }
            }
            let Some(end) = memchr::memchr2(b'\n', b'\r', chunk) else {
                self.extend_line(chunk)?;
                break;
            };
            self.extend_line(&chunk[..end])?;
            self.after_cr = chunk[end] == b'\r';
            chunk = &chunk[end + 1..];
            self.end_line()?;
        }
        Ok(())
    }

    fn extend_line(&mut self, bytes: &[u8]) -> Result<(), EventTooLarge> {
        if self.line.len() + bytes.len() + self.data.len() > self.max_event {
            return Err(EventTooLarge);
        }
        self.line.extend_from_slice(bytes);
        Ok(())
    }

    fn end_line(&mut self) -> Result<(), EventTooLarge> {
        let line = std::mem::take(&mut self.line);
        let result = self.field(&line);
        // Keep the line's allocation for the next one.
        self.line = line;
        self.line.clear();
        result
    }

    fn field(&mut self, line: &[u8]) -> Result<(), EventTooLarge> {
        if line.is_empty() {
            self.dispatch();
            return Ok(());
        }
        let (name, value) = match memchr::memchr(b':', line) {
            // A comment.
            Some(0) => return Ok(()),
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &[][..]),
        };
        match name {
            b"data" => {
                if self.data.len() + value.len() + 1 > self.max_event {
                    return Err(EventTooLarge);
                }
                self.data.extend_from_slice(value);
                self.data.push(b'\n');
                self.has_data = true;
                self.touched = true;
            }
            b"event" => {
                self.event.clear();
                self.event.extend_from_slice(value);
            }
            // An id with NUL is ignored, as the HTML standard says.
            b"id" if !value.contains(&0) => {
                self.last_id = Some(String::from_utf8_lossy(value).into_owned());
            }
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                self.retry = std::str::from_utf8(value).ok().and_then(|v| v.parse().ok());
            }
            _ => return Ok(()),
        }
        self.touched = true;
        Ok(())
    }

    /// Ends the current event at a blank line.
    fn dispatch(&mut self) {
        if self.raw {
            if self.touched {
                self.data.pop();
                let event = if self.event.is_empty() {
                    "message".to_owned()
                } else {
                    String::from_utf8_lossy(&self.event).into_owned()
                };
                self.events.push_back(SseEvent {
                    event,
                    data: String::from_utf8_lossy(&self.data).into_owned(),
                    id: self.last_id.clone(),
                    retry: self.retry.map(std::time::Duration::from_millis),
                });
            }
            self.touched = false;
            self.data.clear();
            self.has_data = false;
            self.event.clear();
            return;
        }
        if self.has_data && (self.event.is_empty() || self.event == b"message") {
            self.data.pop();
            self.ready
                .push_back(Bytes::from(std::mem::take(&mut self.data)));
        }
        self.data.clear();
        self.has_data = false;
        self.event.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `input` in every two-way split, and byte by byte, and checks the events.
    fn check(input: &str, expected: &[&str]) {
        let input = input.as_bytes();
        let mut splits: Vec<Vec<&[u8]>> = (0..=input.len())
            .map(|at| vec![&input[..at], &input[at..]])
            .collect();
        splits.push(input.chunks(1).collect());
        for chunks in splits {
            let mut parser = SseParser::new(1 << 20);
            let mut got = Vec::new();
            for chunk in &chunks {
                parser.feed(chunk).unwrap();
                while let Some(event) = parser.next_event() {
                    got.push(String::from_utf8(event.to_vec()).unwrap());
                }
            }
            assert_eq!(got, expected, "{chunks:?}");
        }
    }

    #[test]
    fn events() {
        check("event: message\ndata: {\"a\":1}\n\n", &[r#"{"a":1}"#]);
        check("data: 1\n\ndata: 2\n\n", &["1", "2"]);
        // No event name means `message`; other names are skipped.
        check("data: 1\n\nevent: other\ndata: 2\n\n", &["1"]);
        // Multi-line data, a space after the colon is optional and only one is removed.
        check("data: {\ndata:\"a\":\ndata:  1}\n\n", &["{\n\"a\":\n 1}"]);
        // Comments and keep-alives, id and retry fields, unknown fields.
        check(
            ": keep-alive\n\nid: 7\nretry: 10\nfoo: bar\ndata: x\n: inside\n\n",
            &["x"],
        );
        // CRLF and CR line endings.
        check("data: a\r\n\r\ndata: b\r\rdata: c\n\n", &["a", "b", "c"]);
        // A byte-order mark at the start.
        check("\u{feff}data: a\n\n", &["a"]);
        // An event without data, an empty data field, a field without a colon.
        check("event: message\n\ndata\n\ndata:\n\n", &["", ""]);
        // An unterminated event at the end is not dispatched.
        check("data: a\n\ndata: b\n", &["a"]);
    }

    #[test]
    fn raw_events_keep_ids_retry_and_priming_events() {
        let mut parser = SseParser::raw(1 << 10);
        parser
            .feed(b"id: e-1\nretry: 500\ndata: \n\n: comment\n\nevent: endpoint\ndata: /messages?s=1\n\nid: e-2\ndata: {}\n\n")
            .unwrap();
        let events: Vec<SseEvent> = std::iter::from_fn(|| parser.next_raw()).collect();
        let ms = |n| Some(std::time::Duration::from_millis(n));
        assert_eq!(
            events,
            [
                SseEvent {
                    event: "message".into(),
                    data: String::new(),
                    id: Some("e-1".into()),
                    retry: ms(500)
                },
                SseEvent {
                    event: "endpoint".into(),
                    data: "/messages?s=1".into(),
                    id: Some("e-1".into()),
                    retry: ms(500)
                },
                SseEvent {
                    event: "message".into(),
                    data: "{}".into(),
                    id: Some("e-2".into()),
                    retry: ms(500)
                },
            ]
        );
    }

    #[test]
    fn event_size_is_bounded() {
        // A long line is refused while it arrives, before it ends.
        let mut parser = SseParser::new(16);
        assert_eq!(parser.feed(b"data: 0123456789"), Ok(()));
        assert_eq!(parser.feed(b"abcdef"), Err(EventTooLarge));

        // Many short data lines add up.
        let mut parser = SseParser::new(16);
        assert_eq!(parser.feed(b"data: 0123\ndata: 4567\n"), Ok(()));
        assert_eq!(parser.feed(b"data: 89ab\n"), Err(EventTooLarge));

        // Exactly at the bound is fine, and the count restarts with each event.
        let mut parser = SseParser::new(16);
        for _ in 0..4 {
            parser.feed(b"data:0123456789a\n\n").unwrap();
            assert_eq!(parser.next_event().unwrap(), "0123456789a");
        }
    }
}
