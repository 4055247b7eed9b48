//! Hostile servers against the modern client over stdio: a scripted server
//! behind the real line framing (`mcp_transport_stdio::LineReader` over an in-process
//! pipe, configured as `connect_stdio` configures it) answers one request of each case
//! with garbage, oversize lines, responses to the wrong ids, malformed results, requests
//! and notification floods. Each case asserts the exact outcome (a typed error, a result,
//! or a timeout on tokio's paused clock: the response was rightly never recognised); after
//! each the same pipe must still carry a valid call, and nothing may have panicked.
//!
//! The rules: <https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/stdio> (framing),
//! <https://modelcontextprotocol.io/specification/2026-07-28/basic> (JSON-RPC, `resultType`), <https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr> and
//! <https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/pagination>.

mod support;

use mcp_client::{Client, Error};
use mcp_test_support::Recorder;
use serde_json::{Value, json};
use support::hostile::{Expect, LineCase, common_line_cases, line, line_case, nested, play};
use support::script::{Script, connect_lines, response};
use support::{count_panics, panics};

/// The client's line limit in this suite: small enough to cross cheaply, large enough for
/// the deepest case (200 kB).
const MAX_LINE: usize = 256 << 10;

/// What each case asks the server.
#[derive(Debug, Clone, Copy)]
enum Ask {
    ListTools,
    /// `list_tools_all`: follows cursors.
    ListAll,
    CallTool,
    Discover,
}

/// A valid complete result for `request`'s method.
fn valid_result(request: &Value) -> Value {
    match request["method"].as_str() {
        Some("tools/call") => json!({"resultType": "complete", "content": []}),
        Some("server/discover") => json!({"resultType": "complete",
            "supportedVersions": ["2026-07-28"], "capabilities": {}}),
        _ => json!({"resultType": "complete", "tools": []}),
    }
}

/// The valid response to `request`, as a line.
fn valid(request: &Value) -> Vec<u8> {
    line(&response(request, json!({"result": valid_result(request)})))
}

/// A response to `request` with this result.
#[allow(
    clippy::needless_pass_by_value,
    reason = "the table builds each result in place"
)]
fn result(request: &Value, result: Value) -> Vec<Vec<u8>> {
    vec![line(&response(request, json!({"result": result})))]
}

/// The valid response with its id replaced by `id`.
fn with_id(request: &Value, id: Value) -> Vec<u8> {
    let mut message = response(request, json!({"result": valid_result(request)}));
    message["id"] = id;
    line(&message)
}

fn is_decode(method: &'static str) -> impl Fn(&Error) -> bool {
    move |e| matches!(e, Error::Decode { method: m, .. } if m == method)
}

fn unknown_type(e: &Error, expected: &str) -> bool {
    matches!(e, Error::UnknownResultType(t) if t == expected)
}

#[allow(clippy::too_many_lines, reason = "one table")]
fn cases() -> Vec<LineCase<Ask>> {
    use Ask::{CallTool, Discover, ListAll, ListTools};
    let mut cases = common_line_cases(ListTools, ListTools);
    cases.extend([
        // Framing and envelopes: what is not a response to this request is dropped.
        line_case(
            "garbage before the response",
            ListTools,
            |r| vec![b"not json".to_vec(), valid(r)],
            Expect::Ok,
        ),
        line_case(
            "a line past the limit before the response",
            ListTools,
            |r| vec![vec![b'x'; MAX_LINE + 1], valid(r)],
            Expect::Ok,
        ),
        line_case(
            "a response to an id never sent",
            ListTools,
            |r| vec![with_id(r, json!(987_654)), valid(r)],
            Expect::Ok,
        ),
        line_case(
            "a response whose id is the string form",
            ListTools,
            |r| vec![with_id(r, json!(r["id"].to_string())), valid(r)],
            Expect::Ok,
        ),
        line_case(
            "ids of 40 digits, fractional, boolean, object",
            ListTools,
            |r| {
                vec![
                    with_id(r, json!(1e40)),
                    with_id(r, json!(1.5)),
                    with_id(r, json!(true)),
                    with_id(r, json!({"id": 1})),
                    valid(r),
                ]
            },
            Expect::Ok,
        ),
        line_case(
            "an error without an id",
            ListTools,
            |r| {
                vec![
            br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#.to_vec(), valid(r)]
            },
            Expect::Ok,
        ),
        line_case(
            "only an error without an id",
            ListTools,
            |_| {
                vec![
            br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#.to_vec()]
            },
            Expect::TimesOut,
        ),
        line_case(
            "result and error together",
            ListTools,
            |r| {
                vec![line(
                    &json!({"jsonrpc": "2.0", "id": r["id"], "result": {"tools": []}, "error": {"code": 1, "message": "x"}}),
                )]
            },
            // Malformed: dropped like any other such frame, and the request waits.
            Expect::TimesOut,
        ),
        line_case(
            "a duplicate id key",
            ListTools,
            |r| {
                vec![
                    format!(
                        r#"{{"jsonrpc":"2.0","id":{0},"id":{0},"result":{{"tools":[]}}}}"#,
                        r["id"]
                    )
                    .into_bytes(),
                ]
            },
            Expect::TimesOut,
        ),
        line_case(
            "jsonrpc 1.0",
            ListTools,
            |r| {
                vec![line(
                    &json!({"jsonrpc": "1.0", "id": r["id"], "result": {"tools": []}}),
                )]
            },
            Expect::TimesOut,
        ),
        line_case(
            "an error code that is not a number",
            ListTools,
            |r| {
                vec![line(
                    &json!({"jsonrpc": "2.0", "id": r["id"], "error": {"code": "-32603", "message": "x"}}),
                )]
            },
            Expect::TimesOut,
        ),
        // Errors are data, whatever their size.
        // Results that are not what the method returns.
        line_case(
            "a result without tools",
            ListTools,
            |r| result(r, json!({"resultType": "complete"})),
            Expect::Fails("Decode(tools/list)", |e| is_decode("tools/list")(e)),
        ),
        line_case(
            "tools that are not an array",
            ListTools,
            |r| result(r, json!({"tools": {"a": 1}})),
            Expect::Fails("Decode(tools/list)", |e| is_decode("tools/list")(e)),
        ),
        line_case(
            "a tool without an inputSchema",
            ListTools,
            |r| result(r, json!({"tools": [{"name": "t"}]})),
            Expect::Fails("Decode(tools/list)", |e| is_decode("tools/list")(e)),
        ),
        line_case(
            "a tool whose name is a number",
            ListTools,
            |r| {
                result(
                    r,
                    json!({"tools": [{"name": 7, "inputSchema": {"type": "object"}}]}),
                )
            },
            Expect::Fails("Decode(tools/list)", |e| is_decode("tools/list")(e)),
        ),
        line_case(
            "a result that is a number",
            ListTools,
            |r| result(r, json!(5)),
            Expect::Fails("Decode(tools/list)", |e| is_decode("tools/list")(e)),
        ),
        line_case(
            "a result that is null",
            ListTools,
            |r| result(r, Value::Null),
            Expect::Fails("Decode(tools/list)", |e| is_decode("tools/list")(e)),
        ),
        line_case(
            "a duplicate member in the result",
            ListTools,
            |r| {
                vec![
                    format!(
                        r#"{{"jsonrpc":"2.0","id":{},"result":{{"tools":[],"tools":[]}}}}"#,
                        r["id"]
                    )
                    .into_bytes(),
                ]
            },
            Expect::Fails("Decode(tools/list)", |e| is_decode("tools/list")(e)),
        ),
        line_case(
            "a discover result without supportedVersions",
            Discover,
            |r| result(r, json!({"capabilities": {}})),
            Expect::Fails("Decode(server/discover)", |e| {
                is_decode("server/discover")(e)
            }),
        ),
        line_case(
            "a tool call result whose content is a string",
            CallTool,
            |r| result(r, json!({"content": "text"})),
            Expect::Fails("Decode(tools/call)", |e| is_decode("tools/call")(e)),
        ),
        // resultType: unknown values, and extensions the client did not declare.
        line_case(
            "an unknown resultType",
            ListTools,
            |r| result(r, json!({"resultType": "hologram", "tools": []})),
            Expect::Fails("UnknownResultType(hologram)", |e| {
                unknown_type(e, "hologram")
            }),
        ),
        line_case(
            "an unknown resultType on a tool call",
            CallTool,
            |r| result(r, json!({"resultType": "hologram", "content": []})),
            Expect::Fails("UnknownResultType(hologram)", |e| {
                unknown_type(e, "hologram")
            }),
        ),
        line_case(
            "a task the client did not declare",
            CallTool,
            |r| result(r, json!({"resultType": "task", "task": {"taskId": "t"}})),
            Expect::Fails("UnknownResultType(task)", |e| unknown_type(e, "task")),
        ),
        line_case(
            "input_required for a list",
            ListTools,
            |r| {
                result(
                    r,
                    json!({"resultType": "input_required", "requestState": "s"}),
                )
            },
            Expect::Fails("UnknownResultType(input_required)", |e| {
                unknown_type(e, "input_required")
            }),
        ),
        line_case(
            "a resultType that is a number",
            ListTools,
            |r| result(r, json!({"resultType": 1, "tools": []})),
            Expect::Fails("Decode(tools/list)", |e| is_decode("tools/list")(e)),
        ),
        line_case(
            "a case-variant resultType",
            ListTools,
            |r| result(r, json!({"resultType": "Complete", "tools": []})),
            Expect::Fails("UnknownResultType(Complete)", |e| {
                unknown_type(e, "Complete")
            }),
        ),
        // Deep nesting: skipped without recursion where the client does not read it, refused
        // by serde_json's depth limit (128) where it does.
        line_case(
            "100 000 levels in an unknown member",
            ListTools,
            |r| {
                vec![
                    format!(
                        r#"{{"jsonrpc":"2.0","id":{},"result":{{"tools":[],"x":{}}}}}"#,
                        r["id"],
                        nested(100_000)
                    )
                    .into_bytes(),
                ]
            },
            Expect::Ok,
        ),
        line_case(
            "200 levels in a tool's inputSchema",
            ListTools,
            |r| {
                vec![
            format!(r#"{{"jsonrpc":"2.0","id":{},"result":{{"tools":[{{"name":"t","inputSchema":{{"type":"object","x":{}}}}}]}}}}"#, r["id"], nested(200)).into_bytes()]
            },
            Expect::Fails("Decode(tools/list)", |e| is_decode("tools/list")(e)),
        ),
        line_case(
            "100 000 levels as the result",
            ListTools,
            |r| {
                vec![
                    format!(
                        r#"{{"jsonrpc":"2.0","id":{},"result":{}}}"#,
                        r["id"],
                        nested(100_000)
                    )
                    .into_bytes(),
                ]
            },
            Expect::Fails("Decode(tools/list)", |e| is_decode("tools/list")(e)),
        ),
        // Traffic around the response.
        line_case(
            "10 000 notifications before the response",
            ListTools,
            |r| {
                let mut lines: Vec<Vec<u8>> = (0..10_000).map(|n| match n % 4 {
                0 => br#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#.to_vec(),
                1 => br#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"spam"}}"#.to_vec(),
                2 => br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"nobody","progress":1}}"#.to_vec(),
                _ => br#"{"jsonrpc":"2.0","method":"notifications/message","params":"not an object"}"#.to_vec(),
            }).collect();
                lines.push(valid(r));
                lines
            },
            Expect::Ok,
        ),
        line_case(
            "the server cancels the client's request",
            ListTools,
            |r| {
                vec![
                    line(
                        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": r["id"]}}),
                    ),
                    valid(r),
                ]
            },
            Expect::Ok,
        ),
    ]);
    // Servers of 2026-07-28 send no requests: each is refused with -32601, and the call
    // goes on.
    cases.push(LineCase {
        answers: 1,
        ..line_case("a server request (elicitation)", CallTool, |r| vec![
            br#"{"jsonrpc":"2.0","id":"s1","method":"elicitation/create","params":{"mode":"form","message":"?","requestedSchema":{"type":"object","properties":{}}}}"#.to_vec(), valid(r)], Expect::Ok)
    });
    cases.push(LineCase {
        answers: 500,
        ..line_case(
            "500 server requests (ping)",
            ListTools,
            |r| {
                let mut lines: Vec<Vec<u8>> = (0..500)
                    .map(|n| {
                        format!(r#"{{"jsonrpc":"2.0","id":"s{n}","method":"ping"}}"#).into_bytes()
                    })
                    .collect();
                lines.push(valid(r));
                lines
            },
            Expect::Ok,
        )
    });
    // MRTR: bounded rounds, and input requests the client cannot answer.
    cases.push(LineCase {
        rounds: 10,
        ..line_case(
            "input_required forever",
            CallTool,
            |r| {
                result(
                    r,
                    json!({"resultType": "input_required", "requestState": "again"}),
                )
            },
            Expect::Fails("TooManyRounds(10)", |e| {
                matches!(e, Error::TooManyRounds(10))
            }),
        )
    });
    cases.push(line_case(
        "an input request of an unknown method",
        CallTool,
        |r| {
            result(
                r,
                json!({"resultType": "input_required",
        "inputRequests": {"k": {"method": "shell/exec", "params": {"command": "rm -rf /"}}}}),
            )
        },
        Expect::Fails("Decode(tools/call)", |e| is_decode("tools/call")(e)),
    ));
    cases.push(line_case("an elicitation the client has no handler for", CallTool, |r| result(r, json!({"resultType": "input_required",
        "inputRequests": {"k": {"method": "elicitation/create", "params": {"mode": "form", "message": "?", "requestedSchema": {"type": "object", "properties": {}}}}}})),
        Expect::Fails("NoHandler(elicitation/create)", |e| matches!(e, Error::NoHandler { method } if method == "elicitation/create"))));
    // Pagination: cursors that never end must not make the client loop.
    cases.push(LineCase {
        rounds: 3,
        ..line_case("cursors in a cycle (a, b, a)", ListAll, |r| {
            let next = if r["params"]["cursor"] == "a" { "b" } else { "a" };
            result(r, json!({"tools": [{"name": next, "inputSchema": {"type": "object"}}], "nextCursor": next}))
        }, Expect::Ok)
    });
    cases
}

/// Makes the case's call; its result as JSON.
async fn run(client: Client, call: Ask) -> Result<Value, Error> {
    let object = mcp_types::JsonObject::new();
    Ok(match call {
        Ask::ListTools => serde_json::to_value(client.list_tools(None).await?),
        Ask::ListAll => serde_json::to_value(client.list_tools_all().await?),
        Ask::CallTool => serde_json::to_value(client.call_tool("t", object).await?),
        Ask::Discover => serde_json::to_value(client.discover().await?),
    }
    .unwrap())
}

/// Runs one case, then the probe: a valid `tools/list` on the same pipe.
async fn check(client: &Client, script: &mut Script, case: &LineCase<Ask>) {
    let call = tokio::spawn(run(client.clone(), case.ask));
    play(script, case, case.name, valid, call).await;
    probe(client, script, case.name).await;
}

/// A valid call on the same pipe succeeds, and is the very next thing the client sends.
async fn probe(client: &Client, script: &mut Script, name: &str) {
    script.probe(client, name, valid).await;
}

#[tokio::test(start_paused = true)]
async fn the_table() {
    count_panics();
    let (client, mut script, _conn) = connect_lines(Client::builder("hostile", "1"), MAX_LINE);
    for case in &cases() {
        check(&client, &mut script, case).await;
    }
    assert_eq!(panics(), 0, "nothing may panic, even caught");
}

/// The valid `tools/list` response to `request` padded to exactly `len` bytes.
fn response_of(request: &Value, len: usize) -> Vec<u8> {
    let mut message = response(request, json!({"result": {"tools": [], "pad": ""}}));
    let bare = message.to_string().len();
    message["result"]["pad"] = json!("p".repeat(len - bare));
    let line = line(&message);
    assert_eq!(line.len(), len);
    line
}

#[tokio::test(start_paused = true)]
async fn a_response_at_the_line_limit_is_read_and_one_byte_more_is_not() {
    count_panics();
    let (client, mut script, _conn) = connect_lines(Client::builder("hostile", "1"), MAX_LINE);
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.list_tools(None).await }
    });
    let request = script.request().await;
    script.line(&response_of(&request, MAX_LINE)).await;
    assert!(call.await.unwrap().is_ok(), "a line of exactly the limit");

    // One byte more: the line is skipped unread, so the request is never answered.
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.list_tools(None).await }
    });
    let request = script.request().await;
    script.line(&response_of(&request, MAX_LINE + 1)).await;
    let outcome = call.await.unwrap();
    assert!(
        matches!(&outcome, Err(Error::Timeout { method, .. }) if method == "tools/list"),
        "{outcome:?}"
    );
    assert_eq!(script.request().await["method"], "notifications/cancelled");
    probe(&client, &mut script, "past the line limit").await;
    assert_eq!(panics(), 0);
}

/// Answers `pages` list requests, each with `per_page` tools and a fresh cursor, the last
/// without one when `ends`; returns the client's outcome.
async fn paged(
    client: &Client,
    script: &mut Script,
    pages: usize,
    per_page: usize,
    ends: bool,
) -> Result<Vec<mcp_types::Tool>, Error> {
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.list_tools_all().await }
    });
    let tool = json!({"name": "t", "inputSchema": {"type": "object"}});
    let tools = Value::Array(vec![tool; per_page]);
    for page in 1..=pages {
        let request = script.request().await;
        assert_eq!(request["method"], "tools/list");
        let mut result = json!({"tools": tools});
        if page < pages || !ends {
            result["nextCursor"] = json!(format!("page-{page}"));
        }
        script.reply(&request, json!({ "result": result })).await;
    }
    call.await.unwrap()
}

#[tokio::test(start_paused = true)]
async fn list_helpers_stop_at_their_page_and_item_limits() {
    count_panics();
    let (client, mut script, _conn) = connect_lines(Client::builder("hostile", "1"), MAX_LINE);
    let too_long = |outcome: &Result<Vec<mcp_types::Tool>, Error>| matches!(outcome, Err(Error::ListTooLong { method }) if method == "tools/list");

    // Exactly MAX_PAGES pages: all read.
    let all = paged(&client, &mut script, mcp_client::MAX_PAGES, 1, true).await;
    assert_eq!(all.unwrap().len(), mcp_client::MAX_PAGES);
    // Cursors that never end: the client stops after MAX_PAGES requests.
    let outcome = paged(&client, &mut script, mcp_client::MAX_PAGES, 1, false).await;
    assert!(too_long(&outcome), "{outcome:?}");
    probe(&client, &mut script, "past the page limit").await;

    // Exactly MAX_LISTED items (20 pages of 5000), then one page more.
    let per_page = 5000;
    let pages = mcp_client::MAX_LISTED / per_page;
    let all = paged(&client, &mut script, pages, per_page, true).await;
    assert_eq!(all.unwrap().len(), mcp_client::MAX_LISTED);
    let outcome = paged(&client, &mut script, pages + 1, per_page, true).await;
    assert!(too_long(&outcome), "{outcome:?}");
    probe(&client, &mut script, "past the item limit").await;
    assert_eq!(panics(), 0);
}

/// Makes a `tools/call` and answers its first `asks` rounds with `input_required` and the
/// rest (at most `reads` requests in all) with a complete result; each round after the
/// first must carry the state the previous one set. Returns the client's outcome.
async fn rounds(
    client: &Client,
    script: &mut Script,
    asks: usize,
    reads: usize,
) -> Result<Value, Error> {
    let call = tokio::spawn(run(client.clone(), Ask::CallTool));
    for round in 1..=reads {
        let request = script.request().await;
        assert_eq!(request["method"], "tools/call", "round {round}: {request}");
        if round > 1 {
            let state = format!("round {}", round - 1);
            assert_eq!(request["params"]["requestState"], json!(state), "{request}");
        }
        let answer = if round > asks {
            valid_result(&request)
        } else {
            json!({"resultType": "input_required", "requestState": format!("round {round}")})
        };
        script.reply(&request, json!({ "result": answer })).await;
    }
    call.await.expect("the call must not panic")
}

#[tokio::test(start_paused = true)]
async fn mrtr_completes_in_the_last_allowed_round_and_not_one_later() {
    count_panics();
    let (client, mut script, _conn) =
        connect_lines(Client::builder("hostile", "1").max_rounds(3), MAX_LINE);
    // Two rounds of input, complete in the third: the last one allowed.
    let outcome = rounds(&client, &mut script, 2, 3).await;
    assert!(outcome.is_ok(), "{outcome:?}");
    probe(&client, &mut script, "complete in round 3 of 3").await;
    // Input in all three rounds: the client stops after the third request (the probe
    // shows it sent no fourth).
    let outcome = rounds(&client, &mut script, 3, 3).await;
    assert!(
        matches!(outcome, Err(Error::TooManyRounds(3))),
        "{outcome:?}"
    );
    probe(&client, &mut script, "after TooManyRounds(3)").await;
    assert_eq!(panics(), 0);
}

/// How many of the recorded warnings are about a dropped change notification.
fn drop_warnings(warnings: &Recorder) -> usize {
    warnings
        .events()
        .iter()
        .filter(|e| e.level == tracing::Level::WARN)
        .filter(|e| e.message().contains("a change notification was dropped"))
        .count()
}

#[tokio::test(start_paused = true)]
async fn a_subscription_keeps_64_events_for_a_consumer_that_does_not_read() {
    const BUFFER: usize = 64;
    count_panics();
    let warnings = Recorder::warnings();
    // The runtime has one thread, so the connection's reader sees this subscriber.
    let _guard = tracing::subscriber::set_default(warnings.clone());
    let (client, mut script, _conn) = connect_lines(Client::builder("hostile", "1"), MAX_LINE);
    let listening = tokio::spawn({
        let client = client.clone();
        async move { client.listen(mcp_types::SubscriptionFilter::new()).await }
    });
    let listen = script.request().await;
    assert_eq!(listen["method"], "subscriptions/listen", "{listen}");
    let mut subscription = listening.await.unwrap().expect("listen");
    // 65 changes while the consumer reads nothing; the reader must go on past them.
    let updated = |n: usize| {
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
            "params": {"uri": format!("res://{n}"),
                "_meta": {"io.modelcontextprotocol/subscriptionId": listen["id"]}}})
    };
    for n in 0..=BUFFER {
        script.send(&updated(n)).await;
    }
    // A call answered after them completes: the reader routed all 65 and did not wait.
    probe(&client, &mut script, "after 65 unread events").await;
    assert_eq!(
        drop_warnings(&warnings),
        1,
        "the 65th is dropped with a warning"
    );
    // The first 64 are kept, in order; the 65th is gone.
    for n in 0..BUFFER {
        let event = subscription.next().await;
        assert_eq!(
            event,
            Some(mcp_client::ListenEvent::ResourceUpdated(format!(
                "res://{n}"
            ))),
            "event {n}"
        );
    }
    let more = tokio::time::timeout(std::time::Duration::from_secs(1), subscription.next()).await;
    assert!(more.is_err(), "nothing past the 64th: {more:?}");
    // With room again, the next change is delivered.
    script.send(&updated(BUFFER + 1)).await;
    assert_eq!(
        subscription.next().await,
        Some(mcp_client::ListenEvent::ResourceUpdated(format!(
            "res://{}",
            BUFFER + 1
        )))
    );
    assert_eq!(drop_warnings(&warnings), 1);
    assert_eq!(panics(), 0);
}
