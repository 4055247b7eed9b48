//! The checks on what comes back: every reply is checked, so that a broken server cannot
//! look fast.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;

use serde::Deserialize;
use serde::de::{IgnoredAny, MapAccess, Visitor};
use serde_json::Value;

/// What a successful reply must hold, besides the id of a call in flight and no error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expect {
    /// A `tools/call` result, not `isError`, whose first content block is a text block
    /// with exactly this text (the `echo` check).
    Text(String),
    /// A `tools/call` result, not `isError`, with at least one content block, each with a
    /// string `type`.
    Content,
    /// A `tools/list` listing with at least this many tools, each with a string `name` and
    /// an object `inputSchema`; a page with a `nextCursor` is followed by a request for the
    /// next page ([`Received::Page`], [`Listing`]).
    Tools(usize),
    /// Any result (another method): a `result`, no `error`.
    Any,
}

#[derive(Deserialize)]
struct Message<'a> {
    id: Option<Value>,
    #[serde(borrow)]
    method: Option<Cow<'a, str>>,
    params: Option<NoteParams>,
    #[serde(borrow)]
    result: Option<ReplyResult<'a>>,
    error: Option<IgnoredAny>,
}

#[derive(Deserialize)]
struct NoteParams {
    #[serde(rename = "progressToken")]
    progress_token: Option<Value>,
    progress: Option<f64>,
}

#[derive(Deserialize)]
struct ReplyResult<'a> {
    #[serde(borrow)]
    content: Option<Vec<Content<'a>>>,
    #[serde(rename = "isError", default)]
    is_error: bool,
    #[serde(rename = "protocolVersion")]
    protocol_version: Option<IgnoredAny>,
    #[serde(borrow)]
    tools: Option<Vec<ToolEntry<'a>>>,
    #[serde(borrow, rename = "nextCursor")]
    next_cursor: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Content<'a> {
    #[serde(borrow, rename = "type")]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow)]
    text: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct ToolEntry<'a> {
    #[serde(borrow)]
    name: Option<Cow<'a, str>>,
    #[serde(rename = "inputSchema")]
    input_schema: Option<AnObject>,
}

/// Any JSON object, its contents skipped; anything else fails to deserialize.
struct AnObject;

impl<'de> Deserialize<'de> for AnObject {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ObjectVisitor;
        impl<'de> Visitor<'de> for ObjectVisitor {
            type Value = AnObject;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<AnObject, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(AnObject)
            }
        }
        deserializer.deserialize_map(ObjectVisitor)
    }
}

/// What one message from the server was.
#[derive(Clone, Debug, PartialEq)]
pub enum Received {
    /// A successful reply to request `id`.
    Reply(u64),
    /// A page of a `tools/list` listing ([`Expect::Tools`]), to be checked with a
    /// [`Listing`]: request `id` got `tools` tools and, unless it was the last page, the
    /// cursor of the next.
    Page {
        id: u64,
        tools: usize,
        next_cursor: Option<String>,
    },
    /// A `notifications/progress` for the integer token `token` with this progress.
    Progress { token: u64, progress: f64 },
    /// Another notification or a request from the server: not counted.
    Other,
}

impl Received {
    /// The id of the request a reply answers; `None` for a notification.
    fn id(&self) -> Option<u64> {
        match self {
            Received::Reply(id) | Received::Page { id, .. } => Some(*id),
            Received::Progress { .. } | Received::Other => None,
        }
    }

    /// The same reply to request `id`; `None` for a notification.
    fn with_id(self, id: u64) -> Option<Self> {
        match self {
            Received::Reply(_) => Some(Received::Reply(id)),
            Received::Page {
                tools, next_cursor, ..
            } => Some(Received::Page {
                id,
                tools,
                next_cursor,
            }),
            Received::Progress { .. } | Received::Other => None,
        }
    }
}

/// Replies at least this long are compared with the last one this thread checked whole.
const COMPARED_FROM: usize = 16 << 10;

/// The last large reply a thread checked whole: its text before and after its id, what it
/// was checked against, and what it was.
struct Checked {
    before: Vec<u8>,
    after: Vec<u8>,
    expect: Expect,
    received: Received,
}

thread_local! {
    static LAST_CHECKED: std::cell::RefCell<Option<Checked>> = const { std::cell::RefCell::new(None) };
}

/// A reply's integer id and the text before and after it, where the id is the first
/// member (`{"jsonrpc":"2.0","id":N,` or `{"id":N,`) or the last (`"id":N}` at the end).
/// Only a split whose id the whole check read too is remembered, so a text equal to a
/// remembered one around its id has its id in the same place.
fn split_id(message: &[u8]) -> Option<(u64, &[u8], &[u8])> {
    let digits_at = |start: usize| {
        let len = message[start..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        (1..=19).contains(&len).then_some(start..start + len)
    };
    let span = [&br#"{"jsonrpc":"2.0","id":"#[..], br#"{"id":"#]
        .iter()
        .find(|prefix| message.starts_with(prefix))
        .and_then(|prefix| digits_at(prefix.len()))
        .or_else(|| {
            let end = message.len()
                - message
                    .iter()
                    .rev()
                    .take_while(|b| b.is_ascii_whitespace())
                    .count();
            let body = message[..end].strip_suffix(b"}")?;
            let len = body.iter().rev().take_while(|b| b.is_ascii_digit()).count();
            let start = body.len() - len;
            (body[..start].ends_with(br#","id":"#) && (1..=19).contains(&len))
                .then_some(start..body.len())
        })?;
    let id = std::str::from_utf8(&message[span.clone()])
        .ok()?
        .parse()
        .ok()?;
    Some((id, &message[..span.start], &message[span.end..]))
}

/// [`check_whole`], but a large reply whose text around its id equals that of the last
/// large reply this thread checked whole, against the same expectation, is that reply
/// again with its own id: the same bytes hold the same things. A server answering a
/// listing or a large echo sends the same text every time but for the id, and reading
/// 240 KB of JSON cost the driver about twice what serving it cost the fastest server,
/// so that the driver, not the servers, set the pace of those rows.
pub fn check(message: &[u8], expect: &Expect) -> Result<Received, String> {
    if message.len() < COMPARED_FROM {
        return check_whole(message, expect);
    }
    let split = split_id(message);
    if let Some((id, before, after)) = split {
        let again = LAST_CHECKED.with_borrow(|last| {
            last.as_ref()
                .filter(|c| c.before == before && c.after == after && c.expect == *expect)
                .and_then(|c| c.received.clone().with_id(id))
        });
        if let Some(again) = again {
            return Ok(again);
        }
    }
    let received = check_whole(message, expect)?;
    if let Some((id, before, after)) = split
        && received.id() == Some(id)
    {
        LAST_CHECKED.with_borrow_mut(|last| {
            *last = Some(Checked {
                before: before.to_vec(),
                after: after.to_vec(),
                expect: expect.clone(),
                received: received.clone(),
            });
        });
    }
    Ok(received)
}

/// Checks one message: a notification passes as [`Received::Progress`] or
/// [`Received::Other`]; a reply must carry an integer id, no error, and (unless it answers
/// `initialize`) what `expect` says.
pub fn check_whole(message: &[u8], expect: &Expect) -> Result<Received, String> {
    let short = || String::from_utf8_lossy(&message[..message.len().min(300)]).into_owned();
    let parsed: Message<'_> = serde_json::from_slice(message)
        .map_err(|e| format!("unreadable message ({e}): {}", short()))?;
    if let Some(method) = parsed.method {
        if method != "notifications/progress" {
            return Ok(Received::Other);
        }
        let params = parsed
            .params
            .ok_or_else(|| format!("a progress notification without params: {}", short()))?;
        let token = params
            .progress_token
            .as_ref()
            .and_then(Value::as_u64)
            .ok_or_else(|| {
                format!(
                    "a progress notification without an integer token: {}",
                    short()
                )
            })?;
        let progress = params
            .progress
            .ok_or_else(|| format!("a progress notification without a progress: {}", short()))?;
        return Ok(Received::Progress { token, progress });
    }
    let id = parsed
        .id
        .as_ref()
        .and_then(Value::as_u64)
        .ok_or_else(|| format!("reply without an integer id: {}", short()))?;
    if parsed.error.is_some() {
        return Err(format!("error reply: {}", short()));
    }
    let result = parsed
        .result
        .ok_or_else(|| format!("reply without a result: {}", short()))?;
    if result.protocol_version.is_some() {
        return Ok(Received::Reply(id));
    }
    match expect {
        Expect::Text(expected) => {
            if result.is_error {
                return Err(format!("tool error: {}", short()));
            }
            let content = result.content.unwrap_or_default();
            match content.first().and_then(|c| c.text.as_deref()) {
                Some(text) if text == expected => Ok(Received::Reply(id)),
                Some(text) => Err(format!(
                    "reply {id} carries {} bytes of text that are not the {} bytes expected",
                    text.len(),
                    expected.len()
                )),
                None => Err(format!(
                    "reply {id} without a text content block: {}",
                    short()
                )),
            }
        }
        Expect::Content => {
            if result.is_error {
                return Err(format!("tool error: {}", short()));
            }
            let content = result
                .content
                .ok_or_else(|| format!("reply {id} without content: {}", short()))?;
            if content.is_empty() {
                return Err(format!("reply {id} with empty content: {}", short()));
            }
            if content.iter().any(|c| c.kind.is_none()) {
                return Err(format!(
                    "reply {id} with a content block without a type: {}",
                    short()
                ));
            }
            Ok(Received::Reply(id))
        }
        Expect::Tools(_) => {
            let tools = result
                .tools
                .ok_or_else(|| format!("reply {id} without tools: {}", short()))?;
            if let Some(i) = tools
                .iter()
                .position(|t| t.name.is_none() || t.input_schema.is_none())
            {
                return Err(format!(
                    "reply {id}: tool {i} has no name or no inputSchema object"
                ));
            }
            Ok(Received::Page {
                id,
                tools: tools.len(),
                next_cursor: result.next_cursor.map(Cow::into_owned),
            })
        }
        Expect::Any => Ok(Received::Reply(id)),
    }
}

/// The `tools/list` listings in flight: the tools counted so far, keyed by the id of the
/// request for the next page.
#[derive(Debug, Default)]
pub struct Listing {
    at_least: usize,
    counted: HashMap<u64, usize>,
}

/// What a page of a listing means.
#[derive(Debug, PartialEq, Eq)]
pub enum Listed {
    /// The listing is complete, with enough tools.
    Done,
    /// The listing goes on: request the page at `cursor`, with [`Listing::carry`].
    More { cursor: String, so_far: usize },
}

impl Listing {
    pub fn new(at_least: usize) -> Self {
        Self {
            at_least,
            counted: HashMap::new(),
        }
    }

    /// Records a page that request `id` got.
    pub fn page(
        &mut self,
        id: u64,
        tools: usize,
        next_cursor: Option<String>,
    ) -> Result<Listed, String> {
        let so_far = self.counted.remove(&id).unwrap_or(0) + tools;
        match next_cursor {
            Some(_) if tools == 0 => Err(format!(
                "request {id} got an empty page with a nextCursor: the listing would never end"
            )),
            Some(cursor) => Ok(Listed::More { cursor, so_far }),
            None if so_far >= self.at_least => Ok(Listed::Done),
            None => Err(format!(
                "the listing ending with request {id} has {so_far} tools, fewer than the {} \
                 expected",
                self.at_least
            )),
        }
    }

    /// Carries the count of a listing over to request `id`, for its next page.
    pub fn carry(&mut self, id: u64, so_far: usize) {
        self.counted.insert(id, so_far);
    }
}

/// The progress notifications seen per call in flight, checked when its reply comes: the
/// reply must follow exactly `expected` notifications whose progress increased each time.
#[derive(Debug, Default)]
pub struct ProgressCheck {
    expected: usize,
    seen: HashMap<u64, (usize, f64)>,
}

impl ProgressCheck {
    pub fn new(expected: usize) -> Self {
        Self {
            expected,
            seen: HashMap::new(),
        }
    }

    /// Records a notification for `token` (the id of a call).
    pub fn note(&mut self, token: u64, progress: f64) -> Result<(), String> {
        let entry = self.seen.entry(token).or_insert((0, f64::NEG_INFINITY));
        if progress.partial_cmp(&entry.1) != Some(std::cmp::Ordering::Greater) {
            return Err(format!(
                "progress for call {token} went from {} to {progress}: it must increase",
                entry.1
            ));
        }
        *entry = (entry.0 + 1, progress);
        Ok(())
    }

    /// Checks the notifications of the call `id`, which just got its reply.
    pub fn finish(&mut self, id: u64) -> Result<(), String> {
        let got = self.seen.remove(&id).map_or(0, |(n, _)| n);
        if got == self.expected {
            Ok(())
        } else {
            Err(format!(
                "call {id} got {got} progress notifications before its reply, not {}",
                self.expected
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_checks() {
        let hi = Expect::Text("hi".to_owned());
        let ok = br#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"hi"}]}}"#;
        assert_eq!(check(ok, &hi), Ok(Received::Reply(3)));
        assert!(
            check(ok, &Expect::Text("ho".to_owned()))
                .unwrap_err()
                .contains("not the")
        );
        let err = br#"{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"no"}}"#;
        assert!(check(err, &hi).unwrap_err().contains("error reply"));
        let tool_err = br#"{"jsonrpc":"2.0","id":3,"result":{"isError":true,"content":[{"type":"text","text":"hi"}]}}"#;
        assert!(check(tool_err, &hi).is_err());
        let note = br#"{"jsonrpc":"2.0","method":"notifications/message","params":{}}"#;
        assert_eq!(check(note, &hi), Ok(Received::Other));
        let init = br#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{}}}"#;
        assert_eq!(check(init, &hi), Ok(Received::Reply(0)));
        assert!(check(b"not json", &hi).is_err());
        assert!(check(br#"{"jsonrpc":"2.0","id":"x","result":{}}"#, &hi).is_err());
        assert!(check(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#, &hi).is_err());
    }

    #[test]
    fn content_checks() {
        let ok = br#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"x"},{"type":"image","data":"","mimeType":"image/png"}]}}"#;
        assert_eq!(check(ok, &Expect::Content), Ok(Received::Reply(3)));
        let empty = br#"{"jsonrpc":"2.0","id":3,"result":{"content":[]}}"#;
        assert!(check(empty, &Expect::Content).is_err());
        let none = br#"{"jsonrpc":"2.0","id":3,"result":{}}"#;
        assert!(check(none, &Expect::Content).is_err());
        let untyped = br#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"text":"x"}]}}"#;
        assert!(check(untyped, &Expect::Content).is_err());
        let failed =
            br#"{"jsonrpc":"2.0","id":3,"result":{"isError":true,"content":[{"type":"text","text":"bad"}]}}"#;
        assert!(
            check(failed, &Expect::Content)
                .unwrap_err()
                .contains("tool error")
        );
    }

    #[test]
    fn tool_list_checks() {
        let two = br#"{"jsonrpc":"2.0","id":4,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}},{"name":"b","inputSchema":{}}]}}"#;
        let page = |tools, cursor: Option<&str>| Received::Page {
            id: 4,
            tools,
            next_cursor: cursor.map(str::to_owned),
        };
        assert_eq!(check(two, &Expect::Tools(2)), Ok(page(2, None)));
        let more = br#"{"jsonrpc":"2.0","id":4,"result":{"tools":[{"name":"a","inputSchema":{}}],"nextCursor":"c1"}}"#;
        assert_eq!(check(more, &Expect::Tools(2)), Ok(page(1, Some("c1"))));
        let bad_schema =
            br#"{"jsonrpc":"2.0","id":4,"result":{"tools":[{"name":"a","inputSchema":true}]}}"#;
        assert!(check(bad_schema, &Expect::Tools(1)).is_err());
        let no_name = br#"{"jsonrpc":"2.0","id":4,"result":{"tools":[{"inputSchema":{}}]}}"#;
        assert!(check(no_name, &Expect::Tools(1)).is_err());
        let no_tools = br#"{"jsonrpc":"2.0","id":4,"result":{}}"#;
        assert!(check(no_tools, &Expect::Tools(0)).is_err());
        assert_eq!(check(no_tools, &Expect::Any), Ok(Received::Reply(4)));
        let err = br#"{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"no"}}"#;
        assert!(check(err, &Expect::Any).is_err());
    }

    /// A listing of `n` tools with `id` first (`{"jsonrpc":"2.0","id":..`) or last, as
    /// servers write them.
    fn large_listing(id: u64, n: usize, id_last: bool) -> Vec<u8> {
        let tools = (0..n)
            .map(|i| format!(r#"{{"name":"tool-{i}","inputSchema":{{"type":"object"}}}}"#))
            .collect::<Vec<_>>()
            .join(",");
        let result = format!(r#""result":{{"tools":[{tools}]}}"#);
        if id_last {
            format!(r#"{{{result},"jsonrpc":"2.0","id":{id}}}"#).into_bytes()
        } else {
            format!(r#"{{"jsonrpc":"2.0","id":{id},{result}}}"#).into_bytes()
        }
    }

    #[test]
    fn ids_are_split_out_first_or_last() {
        let (id, before, after) = split_id(br#"{"jsonrpc":"2.0","id":42,"result":{}}"#).unwrap();
        assert_eq!(
            (id, before, after),
            (
                42,
                &br#"{"jsonrpc":"2.0","id":"#[..],
                &br#","result":{}}"#[..]
            )
        );
        let (id, before, after) = split_id(b"{\"result\":{},\"id\":7}\n").unwrap();
        assert_eq!(
            (id, before, after),
            (7, &br#"{"result":{},"id":"#[..], &b"}\n"[..])
        );
        assert_eq!(split_id(br#"{"id":9,"result":{}}"#).map(|s| s.0), Some(9));
        for no in [
            &br#"{"jsonrpc":"2.0","id":"9","result":{}}"#[..],
            br#"{"result":{},"id":"9"}"#,
            br#"{"jsonrpc":"2.0","id":,"result":{}}"#,
            br#"{"jsonrpc":"2.0","id":99999999999999999999,"result":{}}"#,
            br#"{"result":{"id":3},"jsonrpc":"2.0"}"#,
        ] {
            assert_eq!(split_id(no), None, "{}", String::from_utf8_lossy(no));
        }
    }

    #[test]
    fn a_large_reply_equal_but_for_its_id_to_one_checked_is_that_reply_again() {
        let expect = Expect::Tools(1);
        for id_last in [false, true] {
            let first = large_listing(1, 600, id_last);
            assert!(first.len() >= COMPARED_FROM);
            let page = |id| Received::Page {
                id,
                tools: 600,
                next_cursor: None,
            };
            assert_eq!(check(&first, &expect), Ok(page(1)));
            assert_eq!(
                check(&large_listing(123_456, 600, id_last), &expect),
                Ok(page(123_456))
            );
            // Another expectation, or another text, is checked whole.
            assert_eq!(
                check(&large_listing(5, 600, id_last), &Expect::Any),
                Ok(Received::Reply(5))
            );
            assert_eq!(
                check(&large_listing(6, 599, id_last), &expect),
                Ok(Received::Page {
                    id: 6,
                    tools: 599,
                    next_cursor: None,
                })
            );
            // A broken copy of a reply checked before fails: it is not the same text.
            let broken = String::from_utf8(large_listing(7, 599, id_last))
                .unwrap()
                .replacen(r#""tool-300""#, r#"tool-300""#, 1);
            assert!(check(broken.as_bytes(), &expect).is_err());
            let no_schema = String::from_utf8(large_listing(8, 599, id_last))
                .unwrap()
                .replacen(
                    r#""inputSchema":{"type":"object"}"#,
                    r#""inputSchema":null"#,
                    1,
                );
            assert!(check(no_schema.as_bytes(), &expect).is_err());
        }
    }

    #[test]
    fn listings() {
        let mut listing = Listing::new(3);
        assert!(listing.page(1, 2, None).unwrap_err().contains("fewer"));
        assert_eq!(listing.page(1, 3, None), Ok(Listed::Done));
        let more = listing.page(2, 2, Some("c".to_owned())).unwrap();
        assert_eq!(
            more,
            Listed::More {
                cursor: "c".to_owned(),
                so_far: 2
            }
        );
        listing.carry(7, 2);
        assert_eq!(listing.page(7, 1, None), Ok(Listed::Done));
        listing.carry(8, 2);
        assert!(listing.page(8, 0, None).is_err());
        assert!(listing.page(9, 0, Some("c".to_owned())).is_err());
    }

    #[test]
    fn progress_notifications() {
        let note = br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":5,"progress":1,"total":3}}"#;
        assert_eq!(
            check(note, &Expect::Content),
            Ok(Received::Progress {
                token: 5,
                progress: 1.0
            })
        );
        let string_token = br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"5","progress":1}}"#;
        assert!(check(string_token, &Expect::Content).is_err());
        let no_progress =
            br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":5}}"#;
        assert!(check(no_progress, &Expect::Content).is_err());

        let mut progress = ProgressCheck::new(2);
        progress.note(1, 0.0).unwrap();
        progress.note(2, 0.0).unwrap();
        progress.note(1, 1.0).unwrap();
        assert!(progress.note(2, 0.0).unwrap_err().contains("increase"));
        progress.finish(1).unwrap();
        assert!(progress.finish(1).unwrap_err().contains("got 0"));
        let mut unasked = ProgressCheck::new(0);
        unasked.finish(3).unwrap();
        unasked.note(3, 1.0).unwrap();
        assert!(unasked.finish(3).is_err());
    }
}
