//! An incremental reader of `text/event-stream` bodies (the WHATWG HTML "Server-sent events"
//! parsing rules), reduced to what an MCP client needs: the `data` of each `message` event.
//!
//! Bytes are fed as they arrive, in chunks of any size; an event split across chunks, or a
//! line ending split between `\r` and `\n`, is reassembled. Lines end with `\n`, `\r\n` or
//! `\r`. Comments (`: keep-alive`), `id` and `retry` fields, unknown fields and events named
//! anything but `message` are ignored; `data` lines are joined with `\n`.
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
        }
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
            }
            b"event" => {
                self.event.clear();
                self.event.extend_from_slice(value);
            }
            _ => {}
        }
        Ok(())
    }

    /// Ends the current event at a blank line.
    fn dispatch(&mut self) {
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
