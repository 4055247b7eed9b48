//! The session table: one hostile answer to one request per case, on one connection per
//! era, each followed by the probe.

use std::sync::atomic::Ordering;

use mcp_client::{Client, Error};
use serde_json::{Value, json};

use super::hostile_client_common::{Ask, ROOTS_MOST, run};
use super::support::hostile::{
    Answered, Expect, LineCase, common_line_cases, line, line_case, nested, play,
};
use super::support::script::{Script, response};
use super::{probe, raw_result, server_request, valid, with_id};

/// A case where the server sends `count` requests of its own and the client answers each
/// as `answered`; the call then succeeds.
const fn asks(
    name: &'static str,
    answer: fn(&Value) -> Vec<Vec<u8>>,
    count: usize,
    answered: Answered,
) -> LineCase<Ask> {
    LineCase {
        answers: count,
        answered,
        ..line_case(name, Ask::List, answer, Expect::Ok)
    }
}

fn is_decode(e: &Error) -> bool {
    matches!(e, Error::Decode { method, .. } if method == "tools/list")
}

/// `requests` from the server, followed by the valid response to `to`.
#[allow(
    clippy::needless_pass_by_value,
    reason = "the table builds each list in place"
)]
fn then_valid(to: &Value, requests: Vec<Value>) -> Vec<Vec<u8>> {
    let mut lines: Vec<Vec<u8>> = requests.iter().map(line).collect();
    lines.push(valid(to));
    lines
}

#[allow(clippy::too_many_lines, reason = "one table")]
pub(super) fn cases() -> Vec<LineCase<Ask>> {
    use Ask::{List, Short};
    let mut cases = common_line_cases(List, Short);
    cases.extend([
        // Framing: lines that are not messages are dropped, the response after them read.
        line_case(
            "stdout pollution before the response",
            List,
            |r| {
                vec![
                    b"Server listening on stdio...".to_vec(),
                    b"DEBUG {not json".to_vec(),
                    valid(r),
                ]
            },
            Expect::Ok,
        ),
        line_case(
            "a line past the 4 MiB limit before the response",
            List,
            |r| {
                vec![
                    vec![b'x'; mcp_transport_stdio::DEFAULT_MAX_LINE + 1],
                    valid(r),
                ]
            },
            Expect::Ok,
        ),
        line_case(
            "100 000 levels as a batch, then the response",
            List,
            |r| vec![nested(100_000).into_bytes(), valid(r)],
            Expect::Ok,
        ),
        // Ids: only the request's own id is its response.
        line_case(
            "ids of every wrong type, then the response",
            List,
            |r| {
                vec![
                    with_id(r, json!(1e40)),
                    with_id(r, json!(1.5)),
                    with_id(r, json!(true)),
                    with_id(r, json!({"id": r["id"]})),
                    with_id(r, json!([r["id"]])),
                    with_id(r, Value::Null),
                    with_id(r, json!("x".repeat(60_000))),
                    with_id(r, json!(i64::MIN)),
                    with_id(r, json!(987_654)),
                    valid(r),
                ]
            },
            Expect::Ok,
        ),
        line_case(
            "only a response to another request's id",
            Short,
            |r| vec![with_id(r, json!(r["id"].as_i64().unwrap_or(0) - 1))],
            Expect::TimesOut,
        ),
        line_case(
            "an error with a null id before the response",
            List,
            |r| {
                vec![
                    br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#.to_vec(),
                    valid(r),
                ]
            },
            Expect::Ok,
        ),
        // Keys: a case variant or a hidden character is another key.
        line_case(
            "case-variant and hidden-character keys, then the response",
            List,
            |r| {
                let id = &r["id"];
                vec![
                    format!(r#"{{"jsonrpc":"2.0","ID":{id},"result":{{"tools":[]}}}}"#)
                        .into_bytes(),
                    format!(r#"{{"jsonrpc":"2.0","id\u200b":{id},"result":{{"tools":[]}}}}"#)
                        .into_bytes(),
                    format!(r#"{{"jsonrpc":"2.0","id\u0000":{id},"result":{{"tools":[]}}}}"#)
                        .into_bytes(),
                    format!(r#"{{"JSONRPC":"2.0","id":{id},"result":{{"tools":[]}}}}"#)
                        .into_bytes(),
                    valid(r),
                ]
            },
            Expect::Ok,
        ),
        line_case(
            "only a case-variant Result key",
            Short,
            |r| {
                vec![
                    format!(
                        r#"{{"jsonrpc":"2.0","id":{},"Result":{{"content":[]}}}}"#,
                        r["id"]
                    )
                    .into_bytes(),
                ]
            },
            Expect::TimesOut,
        ),
        line_case(
            "only a result key with a zero-width space",
            Short,
            |r| {
                vec![
                    format!(
                        r#"{{"jsonrpc":"2.0","id":{},"result\u200b":{{"content":[]}}}}"#,
                        r["id"]
                    )
                    .into_bytes(),
                ]
            },
            Expect::TimesOut,
        ),
        line_case(
            "a duplicate id key",
            Short,
            |r| {
                vec![
                    format!(
                        r#"{{"jsonrpc":"2.0","id":{0},"id":{0},"result":{{"content":[]}}}}"#,
                        r["id"]
                    )
                    .into_bytes(),
                ]
            },
            Expect::TimesOut,
        ),
        line_case(
            "result and error together",
            Short,
            |r| {
                vec![line(
                    &json!({"jsonrpc": "2.0", "id": r["id"], "result": {"content": []},
                                  "error": {"code": 1, "message": "x"}}),
                )]
            },
            // Malformed: dropped like any other such frame, and the request waits.
            Expect::TimesOut,
        ),
        line_case(
            "jsonrpc 1.0",
            Short,
            |r| {
                vec![line(
                    &json!({"jsonrpc": "1.0", "id": r["id"], "result": {"content": []}}),
                )]
            },
            Expect::TimesOut,
        ),
        // Results: what the method returns, or a typed error.
        line_case(
            "a result without tools",
            List,
            |r| vec![raw_result(r, "{}")],
            Expect::Fails("Decode(tools/list)", is_decode),
        ),
        line_case(
            "a duplicate member in the result",
            List,
            |r| vec![raw_result(r, r#"{"tools":[],"tools":[]}"#)],
            Expect::Fails("Decode(tools/list)", is_decode),
        ),
        // Deep nesting: skipped without recursion where the client does not read it,
        // refused by serde_json's depth limit (128) where it does.
        line_case(
            "100 000 levels in an unknown member of the result",
            List,
            |r| {
                vec![raw_result(
                    r,
                    &format!(r#"{{"tools":[],"x":{}}}"#, nested(100_000)),
                )]
            },
            Expect::Ok,
        ),
        line_case(
            "200 levels in a tool's inputSchema",
            List,
            |r| {
                vec![raw_result(
                    r,
                    &format!(
                        r#"{{"tools":[{{"name":"t","inputSchema":{{"type":"object","x":{}}}}}]}}"#,
                        nested(200)
                    ),
                )]
            },
            Expect::Fails("Decode(tools/list)", is_decode),
        ),
        line_case(
            "100 000 levels as the result",
            List,
            |r| vec![raw_result(r, &nested(100_000))],
            Expect::Fails("Decode(tools/list)", is_decode),
        ),
        // A legacy result has no resultType: whatever one claims, it is complete.
        line_case(
            "a result claiming input_required",
            List,
            |r| {
                vec![line(&response(
                    r,
                    json!({"result": {"tools": [],
                    "resultType": "input_required", "requestState": "x"}}),
                ))]
            },
            Expect::Ok,
        ),
        // Notifications with garbage params are dropped; the call goes on.
        line_case(
            "notifications with garbage params, then the response",
            List,
            |r| {
                let mut lines: Vec<Vec<u8>> = [
                    json!({"jsonrpc": "2.0", "method": "notifications/message", "params": "not an object"}),
                    json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": [1], "progress": "lots"}}),
                    json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": [1, 2]}),
                    json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": 5}}),
                    json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": r["id"]}}),
                    json!({"jsonrpc": "2.0", "method": "notifications/unheard/of", "params": {"x": nested(100)}}),
                ]
                .iter()
                .map(line)
                .collect();
                lines.extend((0..5000).map(|_| br#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"spam"}}"#.to_vec()));
                lines.push(valid(r));
                lines
            },
            Expect::Ok,
        ),
        // The server's own requests: answered with the user's handlers, or refused.
        asks(
            "a server request of an unknown method",
            |r| {
                then_valid(
                    r,
                    vec![server_request(
                        "s1",
                        "shell/exec",
                        json!({"command": "rm -rf /"}),
                    )],
                )
            },
            1,
            Answered::Error(-32601),
        ),
        asks(
            "sampling although the client did not declare it",
            |r| {
                then_valid(
                    r,
                    vec![server_request(
                        "s1",
                        "sampling/createMessage",
                        json!({"messages": [], "maxTokens": 1}),
                    )],
                )
            },
            1,
            Answered::Error(-32601),
        ),
        asks(
            "elicitation although the client did not declare it",
            |r| {
                then_valid(
                    r,
                    vec![server_request(
                        "s1",
                        "elicitation/create",
                        json!({"message": "?", "requestedSchema": {"type": "object", "properties": {}}}),
                    )],
                )
            },
            1,
            Answered::Error(-32601),
        ),
        asks(
            "roots/list, declared",
            |r| then_valid(r, vec![server_request("s1", "roots/list", Value::Null)]),
            1,
            Answered::Result(|result| result["roots"][0]["uri"] == "file:///work"),
        ),
        // Params that are neither an object nor an array do not make a JSON-RPC request:
        // like any malformed line from a stdio server it is logged, never answered (the
        // probe after the case proves nothing was sent).
        asks(
            "roots/list with params that are a string",
            |r| {
                then_valid(
                    r,
                    vec![server_request("s1", "roots/list", json!("all of them"))],
                )
            },
            0,
            Answered::Error(0),
        ),
        asks(
            "roots/list with params of the wrong shape",
            |r| {
                then_valid(
                    r,
                    vec![server_request("s1", "roots/list", json!({"_meta": 5}))],
                )
            },
            1,
            Answered::Error(-32602),
        ),
        asks(
            "sampling with params of the wrong type",
            |r| {
                then_valid(
                    r,
                    vec![server_request(
                        "s1",
                        "sampling/createMessage",
                        json!({"messages": "hi", "maxTokens": "many"}),
                    )],
                )
            },
            1,
            Answered::Error(-32602),
        ),
        asks(
            "a server request whose method is case-variant",
            |r| then_valid(r, vec![server_request("s1", "Roots/List", Value::Null)]),
            1,
            Answered::Error(-32601),
        ),
        asks(
            "a ping storm of 500",
            |r| {
                then_valid(
                    r,
                    (0..500)
                        .map(|n| server_request(&format!("s{n}"), "ping", Value::Null))
                        .collect(),
                )
            },
            500,
            Answered::Result(|result| result == &json!({})),
        ),
        asks(
            "200 roots requests at once, past the client's 64",
            |r| {
                then_valid(
                    r,
                    (0..200)
                        .map(|n| server_request(&format!("s{n}"), "roots/list", json!({})))
                        .collect(),
                )
            },
            200,
            Answered::Result(|result| result["roots"].is_array()),
        ),
    ]);
    cases
}

/// Runs one case, then the probe on the same connection.
pub(super) async fn check(client: &Client, script: &mut Script, case: &LineCase<Ask>, era: &str) {
    let name = format!("{era}: {}", case.name);
    ROOTS_MOST.store(0, Ordering::SeqCst);
    let call = tokio::spawn({
        let client = client.clone();
        let ask = case.ask;
        async move { run(&client, ask).await }
    });
    play(script, case, &name, valid, call).await;
    let most = ROOTS_MOST.load(Ordering::SeqCst);
    assert!(most <= 64, "{name}: {most} roots requests answered at once");
    probe(client, script, &name).await;
}
