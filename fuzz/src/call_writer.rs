//! `call_writer`: the client's hand-written `tools/call` writer and result reader
//! (`mcp-client`'s `wire.rs`) against the typed path they stand in for.
//!
//! The input describes a call (`arbitrary`): an id, a tool name, arguments (strings with
//! escapes, control characters and non-ASCII text, integers, floats, nested arrays and
//! objects), the client's capabilities (with or without `extensions`, `experimental` and
//! unknown members) and identity, a log level, a protocol version, a progress token, a
//! trace context, an MRTR round's input responses and request state; and a result text.
//! Checks, through `mcp_client::fuzzing` (the production functions on both sides):
//!
//! - the frame `wire.rs` writes (`encode_request` over `CallToolParams`, from the
//!   `FixedMeta` written once) is byte for byte the frame of the typed params
//!   (`CallToolRequestParams` with the `RequestMetaObject` the client's typed path
//!   builds) as `serde_json` writes it, as `mcp_jsonrpc::encode_request` writes it, and as
//!   the client's typed path writes it; the params alone, through `Serialize` and the
//!   frame writer, are the typed params' text, and the same `Value` (custom transports);
//! - the result reader `complete_result`, on the result text as the unread span of a
//!   response frame and as a checked result, reads what the typed path reads (the checked
//!   result, `resultType` absent or `"complete"`, `serde_json::from_str::<CallToolResult>`)
//!   whenever it reads anything, and reads nothing where the typed path fails (the client
//!   then reads it the typed way, so every outcome is the typed one). Each text is read
//!   twice by one reader, the second time with its `_meta` cached. The result texts are
//!   the input's bytes as they are and one built from the input (members in any order,
//!   text blocks, other blocks, optional white space), which reaches the one-pass reads.

use libfuzzer_sys::arbitrary::{self, Arbitrary, Unstructured};
use mcp_client::fuzzing::{Call, CallFrames, ResultReader};
use mcp_types::{ClientCapabilities, Implementation, InputResponses, JsonObject, RequestId};
use serde_json::{Map, Number, Value, json};

/// Strings that take the writers' and readers' less common paths.
const KNOWN: [&str; 16] = [
    "",
    "\"",
    "\\",
    "\u{0}",
    "\u{1f}",
    "\u{7f}",
    "é",
    "✓",
    "\u{2028}",
    "😀",
    "</script>",
    "text",
    "type",
    "_meta",
    "content",
    "complete",
];

/// A string made of pieces: arbitrary text and [`KNOWN`] ones.
#[derive(Debug, Arbitrary)]
struct Text(Vec<Piece>);

#[derive(Debug, Arbitrary)]
enum Piece {
    Any(String),
    Known(u8),
    /// A run of one character (long strings take another scan).
    Run(char, u8),
}

impl Text {
    fn get(&self) -> String {
        let mut text = String::new();
        for piece in &self.0 {
            match piece {
                Piece::Any(s) => text.push_str(s),
                Piece::Known(n) => text.push_str(KNOWN[usize::from(*n) % KNOWN.len()]),
                Piece::Run(c, n) => text.extend(std::iter::repeat_n(*c, usize::from(*n))),
            }
        }
        text
    }
}

/// A JSON value.
#[derive(Debug, Arbitrary)]
enum Json {
    Null,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Float(f64),
    Str(Text),
    Array(Vec<Json>),
    Object(Vec<(Text, Json)>),
}

/// How deep [`Json::get`] builds (deeper is `null`).
const DEPTH: usize = 24;

impl Json {
    fn get(&self) -> Value {
        self.at(0)
    }

    fn at(&self, depth: usize) -> Value {
        if depth > DEPTH {
            return Value::Null;
        }
        match self {
            Json::Null => Value::Null,
            Json::Bool(b) => Value::Bool(*b),
            Json::Int(n) => Value::from(*n),
            Json::UInt(n) => Value::from(*n),
            Json::Float(x) => Number::from_f64(*x).map_or(Value::Null, Value::Number),
            Json::Str(text) => Value::String(text.get()),
            Json::Array(items) => items.iter().map(|item| item.at(depth + 1)).collect(),
            Json::Object(members) => Value::Object(object(members, depth + 1)),
        }
    }
}

fn object(members: &[(Text, Json)], depth: usize) -> Map<String, Value> {
    members
        .iter()
        .map(|(key, value)| (key.get(), value.at(depth)))
        .collect()
}

/// A capability: one of the schema's names or another, with any value.
#[derive(Debug, Arbitrary)]
struct Capability {
    name: u8,
    other: Text,
    value: Json,
}

const CAPABILITIES: [&str; 6] = [
    "elicitation",
    "experimental",
    "extensions",
    "roots",
    "sampling",
    "tasks",
];

/// An MRTR answer: the usual shapes, or any value.
#[derive(Debug, Arbitrary)]
enum Answer {
    Decline,
    Cancel,
    Accept(Vec<(Text, Json)>),
    Roots(Vec<Text>),
    Message(Text, Text),
    Any(Json),
}

impl Answer {
    fn get(&self) -> Value {
        match self {
            Answer::Decline => json!({"action": "decline"}),
            Answer::Cancel => json!({"action": "cancel"}),
            Answer::Accept(content) => json!({"action": "accept", "content": object(content, 1)}),
            Answer::Roots(uris) => {
                json!({"roots": uris.iter().map(|u| json!({"uri": u.get()})).collect::<Vec<_>>()})
            }
            Answer::Message(text, model) => json!({
                "role": "assistant",
                "content": {"type": "text", "text": text.get()},
                "model": model.get(),
            }),
            Answer::Any(value) => value.get(),
        }
    }
}

#[derive(Debug, Arbitrary)]
enum Id {
    Int(i64),
    Str(Text),
}

#[derive(Debug, Arbitrary)]
enum Token {
    Int(i64),
    Str(Text),
}

/// The call the input describes.
#[derive(Debug, Arbitrary)]
struct Input {
    id: Id,
    name: Text,
    arguments: Vec<(Text, Json)>,
    capabilities: Vec<Capability>,
    info: (Text, Text, Option<Text>, Option<Text>),
    log_level: Option<u8>,
    version: u8,
    progress: Option<Token>,
    trace: Option<(Text, Option<Text>)>,
    answers: Option<Vec<(Text, Answer)>>,
    state: Option<Text>,
    result: Vec<Member>,
    spaced: bool,
}

const LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

/// A member of a built result text.
#[derive(Debug, Arbitrary)]
enum Member {
    /// `_meta`: a server's identity, or any value.
    Meta(Option<(Text, Text)>, Json),
    Content(Vec<Block>),
    ResultType(u8, Text),
    IsError(Json),
    Structured(Json),
    Other(Text, Json),
}

const RESULT_TYPES: [&str; 4] = ["complete", "input_required", "task", "completed"];

/// A content block of a built result text.
#[derive(Debug, Arbitrary)]
enum Block {
    /// A bare text block, `text` first or `type` first.
    Text(Text, bool),
    /// Any members.
    Other(Vec<(Text, Json)>),
    /// A text block with one more member.
    Extra(Text, Text, Json),
}

impl Block {
    fn get(&self) -> Value {
        match self {
            Block::Text(text, true) => json!({"text": text.get(), "type": "text"}),
            Block::Text(text, false) => json!({"type": "text", "text": text.get()}),
            Block::Other(members) => Value::Object(object(members, 1)),
            Block::Extra(text, key, value) => {
                let mut block = json!({"text": text.get(), "type": "text"});
                block[key.get()] = value.get();
                block
            }
        }
    }
}

/// The result text the members make, each written compactly (`serde_json`, whose member
/// order is the insertion order here), with `", "` between members when `spaced`.
fn result_text(members: &[Member], spaced: bool) -> String {
    let mut text = String::from("{");
    for (n, member) in members.iter().enumerate() {
        if n > 0 {
            text.push_str(if spaced { ", " } else { "," });
        }
        let (name, value) = match member {
            Member::Meta(Some((name, version)), _) => (
                "_meta".to_owned(),
                json!({"io.modelcontextprotocol/serverInfo": {"name": name.get(), "version": version.get()}}),
            ),
            Member::Meta(None, value) => ("_meta".to_owned(), value.get()),
            Member::Content(blocks) => (
                "content".to_owned(),
                blocks.iter().map(Block::get).collect(),
            ),
            Member::ResultType(n, other) => {
                let kind = RESULT_TYPES
                    .get(usize::from(*n))
                    .map_or_else(|| other.get(), |k| (*k).to_owned());
                ("resultType".to_owned(), Value::String(kind))
            }
            Member::IsError(value) => ("isError".to_owned(), value.get()),
            Member::Structured(value) => ("structuredContent".to_owned(), value.get()),
            Member::Other(name, value) => (name.get(), value.get()),
        };
        text.push_str(&serde_json::to_string(&name).expect("a string"));
        text.push(':');
        text.push_str(&serde_json::to_string(&value).expect("a value"));
    }
    text.push('}');
    text
}

/// The capabilities the input names: each member kept if the capabilities still read
/// with it.
fn capabilities(members: &[Capability]) -> ClientCapabilities {
    let mut object = Map::new();
    let mut capabilities = ClientCapabilities::default();
    for member in members {
        let name = CAPABILITIES
            .get(usize::from(member.name))
            .map_or_else(|| member.other.get(), |n| (*n).to_owned());
        let mut with = object.clone();
        with.insert(name, member.value.get());
        if let Ok(read) = serde_json::from_value(Value::Object(with.clone())) {
            object = with;
            capabilities = read;
        }
    }
    capabilities
}

/// One input: see the module docs.
pub fn run(data: &[u8]) {
    let reader = ResultReader::new();
    check_result(&reader, data);
    check_result(&reader, data);
    let Ok(input) = Input::arbitrary_take_rest(Unstructured::new(data)) else {
        return;
    };
    let id = match &input.id {
        Id::Int(n) => RequestId::Integer(*n),
        Id::Str(text) => RequestId::String(text.get()),
    };
    let name = input.name.get();
    let arguments: JsonObject = object(&input.arguments, 1);
    let capabilities = capabilities(&input.capabilities);
    let (info_name, info_version, title, description) = &input.info;
    let mut info = Implementation::new(info_name.get(), info_version.get());
    info.title = title.as_ref().map(Text::get);
    info.description = description.as_ref().map(Text::get);
    let log_level = input.log_level.map(|n| {
        serde_json::from_value(Value::from(LEVELS[usize::from(n) % LEVELS.len()]))
            .expect("a log level")
    });
    let progress_token = input.progress.as_ref().map(|token| {
        serde_json::from_value(match token {
            Token::Int(n) => Value::from(*n),
            Token::Str(text) => Value::String(text.get()),
        })
        .expect("a progress token")
    });
    let trace = input
        .trace
        .as_ref()
        .map(|(parent, state)| (parent.get(), state.as_ref().map(Text::get)));
    let answers: Option<InputResponses> = input.answers.as_ref().map(|answers| {
        answers
            .iter()
            .filter_map(|(key, answer)| {
                Some((key.get(), serde_json::from_value(answer.get()).ok()?))
            })
            .collect()
    });
    let state = input.state.as_ref().map(Text::get);
    let call = Call {
        id: &id,
        name: &name,
        arguments: &arguments,
        capabilities: &capabilities,
        info: &info,
        log_level,
        version: usize::from(input.version),
        progress_token,
        trace,
        input_responses: answers.as_ref(),
        request_state: state.as_deref(),
    };
    if let Some(frames) = mcp_client::fuzzing::call_frames(&call) {
        check_frames(&frames);
    }
    let text = result_text(&input.result, input.spaced);
    check_result(&reader, text.as_bytes());
    check_result(&reader, text.as_bytes());
}

fn check_frames(frames: &CallFrames) {
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    assert_eq!(
        text(&frames.wire),
        text(&frames.serde),
        "the wire frame is not serde_json's"
    );
    assert_eq!(
        text(&frames.typed),
        text(&frames.serde),
        "mcp_jsonrpc's frame is not serde_json's"
    );
    assert_eq!(
        text(&frames.typed_client),
        text(&frames.serde),
        "the typed path's frame is not serde_json's"
    );
    assert_eq!(
        frames.wire_params, frames.typed_params,
        "the params' texts differ"
    );
    assert_eq!(
        frames.wire_value, frames.typed_value,
        "the params' values differ"
    );
    serde_json::from_slice::<Value>(&frames.wire).expect("the frame is JSON");
}

fn check_result(reader: &ResultReader, text: &[u8]) {
    let reads = reader.read(text);
    let pairs = [
        ("span", reads.span, reads.span_typed),
        ("checked", reads.checked, reads.checked_typed),
    ];
    for (how, ours, typed) in pairs {
        match (ours, typed) {
            (Some(Some(ours)), Some(Ok(typed))) => {
                assert_eq!(ours, typed, "{how}: the reads differ");
            }
            (Some(Some(ours)), typed) => {
                panic!("{how}: read {ours:?} where the typed path gives {typed:?}")
            }
            // Read nothing: the client reads it the typed way.
            _ => {}
        }
    }
}
