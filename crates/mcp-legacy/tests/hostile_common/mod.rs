//! What the hostile-input suites share: the server under attack, the table of
//! hostile messages with the exact answer each must get, and a panic counter.
//!
//! Each suite (`hostile_stdio.rs`, `hostile_http.rs`) feeds the same table to the server
//! on its transport, in both eras: the modern one (2026-07-28, `_meta` on every request)
//! and a legacy session (2025-11-25, after `initialize`). After every case a valid request
//! must still succeed, and no panic may have happened anywhere in the process, even one
//! that was caught.

#![allow(
    dead_code,
    reason = "each test binary uses a part of the shared module"
)]

use mcp_server::{ResourceDef, ResourceTemplateDef, Server, ToolDef};
use mcp_types::{CallToolResult, EmbeddedResourceResource, TextResourceContents};
use serde_json::{Value, json};

/// The legacy revision the legacy leg negotiates.
pub(crate) const LEGACY: &str = "2025-11-25";
/// The modern revision.
pub(crate) const MODERN: &str = "2026-07-28";

/// Which era a connection speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Era {
    /// 2026-07-28: stateless, `_meta` on every request.
    Modern,
    /// 2025-11-25: an `initialize`d session.
    Legacy,
}

pub(crate) use mcp_test_support::{count_panics, panics};

/// Two tests that run `$run` (an `async fn(Era)`), one in each era.
#[allow(
    unused_macros,
    reason = "each test binary uses a part of the shared module"
)]
macro_rules! in_both_eras {
    ($run:ident: $modern:ident, $legacy:ident) => {
        #[tokio::test]
        async fn $modern() {
            $run(Era::Modern).await;
        }

        #[tokio::test]
        async fn $legacy() {
            $run(Era::Legacy).await;
        }
    };
}
#[allow(
    unused_imports,
    reason = "each test binary uses a part of the shared module"
)]
pub(crate) use in_both_eras;

/// The server under attack: a tool with a strict schema, a file-like resource template
/// and a fixed resource. Its handlers record nothing; what matters is what the wire says.
pub(crate) fn server() -> Server {
    Server::builder("hostile", "1.0.0")
        .tool(ToolDef::new(
            "echo",
            json!({"type": "object", "properties": {"text": {"type": "string", "maxLength": 64}},
                   "required": ["text"], "additionalProperties": false}),
            |args, _cx| async move {
                Ok(CallToolResult::text(
                    args["text"].as_str().unwrap_or_default(),
                ))
            },
        ))
        .resource(ResourceDef::new(
            "test://fixed",
            "fixed",
            |uri, _cx| async move {
                Ok(vec![EmbeddedResourceResource::TextResourceContents(
                    TextResourceContents::new("fixed", uri),
                )])
            },
        ))
        .resource_template(ResourceTemplateDef::new(
            "file:///srv/{+path}",
            "files",
            |uri, vars, _cx| async move {
                let path = vars.get("path").cloned().unwrap_or_default();
                Ok(vec![EmbeddedResourceResource::TextResourceContents(
                    TextResourceContents::new(format!("file {path}"), uri),
                )])
            },
        ))
        .build()
        .unwrap()
}

/// The `_meta` of a modern request.
pub(crate) fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "hostile", "version": "1"}
    })
}

/// A request of `era`: modern ones carry `_meta` in their params.
#[allow(
    clippy::needless_pass_by_value,
    reason = "callers build the id and params in place"
)]
pub(crate) fn request(era: Era, id: Value, method: &str, mut params: Value) -> Value {
    if era == Era::Modern {
        params["_meta"] = meta();
    }
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// The valid request sent after every case, and a check of its response.
pub(crate) fn probe(era: Era, id: i64) -> Value {
    request(
        era,
        json!(id),
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "still here"}}),
    )
}

/// Whether every member of `expected` is in `actual`, recursively; an expected array
/// matches an actual one element by element, as a prefix.
pub(crate) fn subset(expected: &Value, actual: &Value) -> bool {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => e
            .iter()
            .all(|(k, v)| a.get(k).is_some_and(|actual| subset(v, actual))),
        (Value::Array(e), Value::Array(a)) => {
            e.len() <= a.len() && e.iter().zip(a).all(|(e, a)| subset(e, a))
        }
        _ => expected == actual,
    }
}

/// Asserts that `response` is the probe's successful answer.
pub(crate) fn check_probe(case: &str, id: i64, response: &Value) {
    assert_eq!(
        response["id"],
        json!(id),
        "{case}: the probe's answer: {response}"
    );
    assert_eq!(
        response["result"]["content"][0]["text"], "still here",
        "{case}: the probe after it must succeed: {response}"
    );
}

/// What a case must get back.
#[derive(Debug, Clone)]
pub(crate) enum Expect {
    /// A JSON-RPC error with this id and code; over HTTP with this status.
    Error { id: Value, code: i32, status: u16 },
    /// A result with this id containing these members; over HTTP with status 200.
    Result { id: Value, members: Value },
    /// Nothing at all on stdio (a notification, or a response the server never asked
    /// for); over HTTP this status and, when given, a JSON-RPC error of this code.
    Silent { status: u16, code: Option<i32> },
}

/// One hostile message and its answer.
#[derive(Debug, Clone)]
pub(crate) struct Case {
    pub(crate) name: &'static str,
    /// The message, without a line ending.
    pub(crate) body: Vec<u8>,
    pub(crate) expect: Expect,
    /// What HTTP answers instead, where the transport decides first.
    pub(crate) on_http: Option<Expect>,
}

impl Case {
    fn on_http(mut self, expect: Expect) -> Case {
        self.on_http = Some(expect);
        self
    }
}

fn case(name: &'static str, body: impl Into<Vec<u8>>, expect: Expect) -> Case {
    Case {
        name,
        body: body.into(),
        expect,
        on_http: None,
    }
}

fn error(id: Value, code: i32, status: u16) -> Expect {
    Expect::Error { id, code, status }
}

/// An error that comes from reading the message itself: the id it could recover (or
/// null), and `400` over HTTP.
fn refused(id: Value, code: i32) -> Expect {
    error(id, code, 400)
}

const PARSE: i32 = -32700;
const INVALID_REQUEST: i32 = -32600;
const METHOD_NOT_FOUND: i32 = -32601;
const INVALID_PARAMS: i32 = -32602;
const UNSUPPORTED_VERSION: i32 = -32022;
const HEADER_MISMATCH: i32 = -32020;
/// 2025-11-25's "resource not found".
const RESOURCE_NOT_FOUND: i32 = -32002;

/// Deep nesting, far past serde_json's recursion limit of 128.
fn deep(levels: usize) -> String {
    format!("{}{}", "[".repeat(levels), "]".repeat(levels))
}

/// The table, for one era. Bodies are bytes: many are not JSON, or not the JSON that
/// `serde_json::Value` would print.
#[allow(clippy::too_many_lines, reason = "a table")]
pub(crate) fn cases(era: Era) -> Vec<Case> {
    let null = Value::Null;
    let list = |id: Value| request(era, id, "tools/list", json!({})).to_string();
    let call = |id: i64, args: Value| {
        request(
            era,
            json!(id),
            "tools/call",
            json!({"name": "echo", "arguments": args}),
        )
        .to_string()
    };
    let read = |id: i64, uri: &str| {
        request(era, json!(id), "resources/read", json!({"uri": uri})).to_string()
    };
    // Codes that differ between the eras.
    let not_found = match era {
        Era::Modern => INVALID_PARAMS,
        Era::Legacy => RESOURCE_NOT_FOUND,
    };
    // A modern -32601 is 404 over HTTP (the spec pins it); a legacy one is a plain reply.
    let no_method_status = match era {
        Era::Modern => 404,
        Era::Legacy => 200,
    };
    let long_id = "i".repeat(60_000);
    let invalid = |id: Value| refused(id, INVALID_REQUEST);
    let tool_error = |id: Value| Expect::Result {
        id,
        members: json!({"isError": true}),
    };
    let listed = |id: Value, tools: Value| Expect::Result {
        id,
        members: json!({ "tools": tools }),
    };
    // Notifications and answers nobody asked for: nothing on stdio; over HTTP a modern
    // request refuses a response, and a legacy session takes it and drops it.
    let stray_response = Expect::Silent {
        status: match era {
            Era::Modern => 400,
            Era::Legacy => 202,
        },
        code: (era == Era::Modern).then_some(INVALID_REQUEST),
    };
    let notification = Expect::Silent {
        status: 202,
        code: None,
    };

    // Bytes that are not JSON.
    #[rustfmt::skip]
    let rows: &[(&str, &str)] = &[
        ("not json", "{not json"),
        ("truncated", r#"{"jsonrpc":"2.0","id":1,"#),
        ("trailing garbage", &(list(json!(1)) + " x")),
        ("a byte order mark", &format!("\u{feff}{}", list(json!(1)))),
        ("nul bytes", "\0\0\0"),
    ];
    let mut cases = each(&refused(null.clone(), PARSE), rows);
    cases.push(case(
        "invalid utf-8",
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\xfe\"}".to_vec(),
        refused(null.clone(), PARSE),
    ));
    // Messages judged by their shape alone, with no id to recover: deep nesting where the
    // envelope skips it (skipping is iterative, so it costs no stack), JSON that is not a
    // JSON-RPC message, ids of every wrong type and size, a duplicate id, and batches.
    #[rustfmt::skip]
    let rows: &[(&str, &str)] = &[
        ("deep nesting as a batch", &deep(100_000)),
        ("a number", "5"),
        ("an empty object", "{}"),
        ("null id", r#"{"jsonrpc":"2.0","id":null,"method":"tools/list"}"#),
        ("fractional id", r#"{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}"#),
        ("exponent id", r#"{"jsonrpc":"2.0","id":1e3,"method":"tools/list"}"#),
        ("boolean id", r#"{"jsonrpc":"2.0","id":true,"method":"tools/list"}"#),
        ("object id", r#"{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}"#),
        ("array id", r#"{"jsonrpc":"2.0","id":[1],"method":"tools/list"}"#),
        ("id past i64", r#"{"jsonrpc":"2.0","id":9223372036854775808,"method":"tools/list"}"#),
        ("id of 40 digits", r#"{"jsonrpc":"2.0","id":1234567890123456789012345678901234567890,"method":"tools/list"}"#),
        ("duplicate id", r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/list"}"#),
        ("a batch", &format!("[{}]", list(json!(1)))),
        ("an empty batch", "[]"),
    ];
    cases.extend(each(&invalid(null.clone()), rows));
    cases.push(case(
        "deep nesting in an unknown member",
        format!(r#"{{"jsonrpc":"2.0","id":3,"x":{}}}"#, deep(100_000)),
        invalid(json!(3)),
    ));
    // JSON that is not a JSON-RPC message, with an id to name in the refusal.
    #[rustfmt::skip]
    let rows: &[(&str, &str)] = &[
        ("jsonrpc 1.0", r#"{"jsonrpc":"1.0","id":7,"method":"tools/list"}"#),
        ("jsonrpc as a number", r#"{"jsonrpc":2.0,"id":7,"method":"tools/list"}"#),
        ("no jsonrpc", r#"{"id":7,"method":"tools/list"}"#),
        ("method as a number", r#"{"jsonrpc":"2.0","id":7,"method":5}"#),
        ("params as a string", r#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":"x"}"#),
        ("a request with a result", r#"{"jsonrpc":"2.0","id":7,"method":"tools/list","result":{}}"#),
    ];
    cases.extend(each(&invalid(json!(7)), rows));
    // Ids that are odd but valid are echoed exactly.
    cases.extend([
        case(
            "the smallest i64 id",
            list(json!(i64::MIN)),
            listed(json!(i64::MIN), json!([{"name": "echo"}])),
        ),
        case(
            "a 60 000-character id",
            list(json!(long_id)),
            listed(json!(long_id), json!([{"name": "echo"}])),
        ),
        case(
            "an empty string id",
            list(json!("")),
            listed(json!(""), json!([])),
        ),
    ]);
    // Case-variant and hidden-character keys: never matched loosely. The engine reads a
    // message with a repeated member to its end before refusing it, so the refusal names
    // the request's id (unless the id is what repeats).
    cases.push(case(
        "duplicate method",
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"tools/call"}"#,
        invalid(json!(1)),
    ));
    #[rustfmt::skip]
    let rows: &[(&str, &str)] = &[
        ("a case-variant method key", r#"{"jsonrpc":"2.0","id":8,"Method":"tools/list"}"#),
        ("a method key with a zero-width space", "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\u{200b}\":\"tools/list\"}"),
        ("a method key with an escaped NUL", r#"{"jsonrpc":"2.0","id":8,"method\u0000":"tools/list"}"#),
    ];
    cases.extend(each(&invalid(json!(8)), rows));
    cases.extend([
        case(
            "a method value with a trailing NUL",
            request(era, json!(8), "tools/list\0", json!({})).to_string(),
            error(json!(8), METHOD_NOT_FOUND, no_method_status),
        )
        // No header can carry the NUL, so the modern `Mcp-Method` cannot match the body.
        .on_http(match era {
            Era::Modern => error(json!(8), HEADER_MISMATCH, 400),
            Era::Legacy => error(json!(8), METHOD_NOT_FOUND, no_method_status),
        }),
        case(
            "a case-variant method value",
            request(era, json!(8), "TOOLS/LIST", json!({})).to_string(),
            error(json!(8), METHOD_NOT_FOUND, no_method_status),
        ),
    ]);
    // Messages a server must not act on.
    #[rustfmt::skip]
    let rows: &[(&str, &str)] = &[
        ("a response sent to the server", r#"{"jsonrpc":"2.0","id":424242,"result":{}}"#),
        ("an error response without an id", r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}"#),
    ];
    cases.extend(each(&stray_response, rows));
    #[rustfmt::skip]
    let rows: &[(&str, &str)] = &[
        ("a request without an id is a notification", r#"{"jsonrpc":"2.0","method":"tools/list","params":{}}"#),
        ("an unknown notification", r#"{"jsonrpc":"2.0","method":"notifications/evil","params":{"x":1}}"#),
        ("a cancellation of nothing", r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":999}}"#),
    ];
    cases.extend(each(&notification, rows));
    // Deep nesting inside params: the envelope passes it on, the core refuses it.
    cases.push(case(
        "deep nesting in params",
        call(9, json!({"text": "DEEP"})).replacen(r#""DEEP""#, &deep(100_000), 1),
        error(json!(9), INVALID_PARAMS, 200),
    ));
    // Methods and tools that do not exist.
    cases.push(case(
        "unknown method",
        request(era, json!(10), "evil/method", json!({})).to_string(),
        error(json!(10), METHOD_NOT_FOUND, no_method_status),
    ));
    for (name, tool) in [
        ("unknown tool", "rm -rf"),
        ("a path as a tool name", "../echo"),
    ] {
        let params = json!({"name": tool, "arguments": {}});
        let body = request(era, json!(11), "tools/call", params).to_string();
        cases.push(case(name, body, error(json!(11), INVALID_PARAMS, 200)));
    }
    // Tool-level abuse: schema violations are results with isError, for the model.
    for (name, args) in [
        ("arguments against the schema", json!({"text": 5})),
        (
            "an argument past maxLength",
            json!({"text": "x".repeat(65)}),
        ),
        (
            "an unexpected argument",
            json!({"text": "a", "__proto__": {"admin": true}}),
        ),
    ] {
        cases.push(case(name, call(12, args), tool_error(json!(12))));
    }
    let not_an_object = json!({"name": "echo", "arguments": [1, 2]});
    cases.push(case(
        "arguments that are not an object",
        request(era, json!(13), "tools/call", not_an_object).to_string(),
        error(json!(13), INVALID_PARAMS, 200),
    ));
    let duplicate_name = call(14, json!({"text": "a"})).replacen(
        r#""name":"echo""#,
        r#""name":"echo","name":"evil""#,
        1,
    );
    cases.push(
        case(
            "duplicate tool name",
            duplicate_name,
            error(json!(14), INVALID_PARAMS, 200),
        )
        // The modern endpoint reads `name` for the `Mcp-Name` check and refuses the
        // duplicate there, before the handler.
        .on_http(error(
            json!(14),
            INVALID_PARAMS,
            if era == Era::Modern { 400 } else { 200 },
        )),
    );
    // Path-like resource URIs never reach the handler.
    for (name, uri) in [
        (
            "a resource uri with dot segments",
            "file:///srv/docs/../../etc/passwd",
        ),
        (
            "a resource uri with encoded dot segments",
            "file:///srv/%2e%2E/etc/passwd",
        ),
        (
            "a resource uri that is only a dot segment",
            "file:///srv/..",
        ),
        ("an unknown resource", "file:///etc/passwd"),
    ] {
        cases.push(case(name, read(15, uri), error(json!(15), not_found, 200)));
    }
    cases.push(case(
        "a resource inside the template still reads",
        read(16, "file:///srv/docs/a..b.txt"),
        Expect::Result {
            id: json!(16),
            members: json!({"contents": [{"text": "file docs/a..b.txt"}]}),
        },
    ));
    if era == Era::Modern {
        cases.extend(meta_cases());
    }
    cases
}

/// One case for each (name, body) of `rows`, all expecting `expect`.
fn each(expect: &Expect, rows: &[(&'static str, &str)]) -> Vec<Case> {
    rows.iter()
        .map(|&(name, body)| case(name, body, expect.clone()))
        .collect()
}

/// `_meta` and version abuse, which only the modern era has (a legacy session negotiated
/// its version once).
fn meta_cases() -> Vec<Case> {
    let with_meta = |id: i64, meta: &Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": {"_meta": meta}})
            .to_string()
    };
    let mut unsupported = meta();
    unsupported["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
    let mut numeric = meta();
    numeric["io.modelcontextprotocol/protocolVersion"] = json!(20_260_728);
    let mut legacy = meta();
    legacy["io.modelcontextprotocol/protocolVersion"] = json!(LEGACY);
    let mut case_variant = meta();
    let version = case_variant
        .as_object_mut()
        .unwrap()
        .shift_remove("io.modelcontextprotocol/protocolVersion")
        .unwrap();
    case_variant["io.modelcontextprotocol/ProtocolVersion"] = version;
    #[rustfmt::skip]
    let rows: &[(&str, &str)] = &[
        ("no params", r#"{"jsonrpc":"2.0","id":20,"method":"tools/list"}"#),
        ("no _meta", r#"{"jsonrpc":"2.0","id":20,"method":"tools/list","params":{}}"#),
        ("_meta that is not an object", r#"{"jsonrpc":"2.0","id":20,"method":"tools/list","params":{"_meta":[1]}}"#),
    ];
    let mut cases = each(&error(json!(20), INVALID_PARAMS, 400), rows);
    #[rustfmt::skip]
    let rows: &[(&str, &str)] = &[
        ("an unsupported version", &with_meta(21, &unsupported)),
        ("a legacy version in _meta", &with_meta(21, &legacy)),
    ];
    cases.extend(each(&error(json!(21), UNSUPPORTED_VERSION, 400), rows));
    cases.extend([
        case(
            "a numeric version",
            with_meta(22, &numeric),
            error(json!(22), INVALID_PARAMS, 400),
        )
        // No `MCP-Protocol-Version` header can equal a number in the body.
        .on_http(error(json!(22), HEADER_MISMATCH, 400)),
        case(
            "a case-variant version key",
            with_meta(22, &case_variant),
            error(json!(22), INVALID_PARAMS, 400),
        ),
        case(
            "a duplicate version key",
            {
                let text = with_meta(23, &meta());
                text.replacen(
                    r#""io.modelcontextprotocol/protocolVersion":"2026-07-28""#,
                    r#""io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/protocolVersion":"2099-01-01""#,
                    1,
                )
            },
            error(json!(23), INVALID_PARAMS, 400),
        ),
        case(
            "capabilities that are not an object",
            {
                let mut bad = meta();
                bad["io.modelcontextprotocol/clientCapabilities"] = json!("all");
                with_meta(24, &bad)
            },
            // The endpoint checks that `_meta` names a version and capabilities; their
            // shape is the core's to judge, and its -32602 is a `200` like any other.
            error(json!(24), INVALID_PARAMS, 200),
        ),
        case(
            "initialize with modern _meta is not a session",
            json!({"jsonrpc": "2.0", "id": 25, "method": "initialize", "params": {
                "_meta": meta(), "protocolVersion": LEGACY, "capabilities": {},
                "clientInfo": {"name": "x", "version": "1"}}})
            .to_string(),
            error(json!(25), METHOD_NOT_FOUND, 404),
        ),
    ]);
    cases
}
