//! The tables of the hostile-server suites, modern and dual-era: what a case must end
//! with ([`Expect`]), the HTTP case (a reply the scripted server makes to one request) and
//! its check, and the stdio case ([`LineCase`]: the lines the scripted server writes for
//! each request it reads), its runner ([`play`]) and the cases every stdio table has,
//! whatever the era ([`common_line_cases`]).

use std::fmt::Debug;

use mcp_client::{Client, Error};
use serde_json::{Value, json};
use tokio::task::JoinHandle;

use super::http::{Reply, Seen};
use super::script::{Script, response};

/// What a case must end with.
pub(crate) enum Expect {
    /// The call succeeds.
    Ok,
    /// The call fails with this error (described for the failure message).
    Fails(&'static str, fn(&Error) -> bool),
    /// Nothing the server sent was the response: the call times out, and over stdio the
    /// client withdraws it with `notifications/cancelled` ([`play`] checks that).
    TimesOut,
}

impl Expect {
    /// Panics unless `outcome`, the end of the call of the case `name`, is the expected one.
    pub(crate) fn assert<T: Debug>(&self, name: &str, outcome: &Result<T, Error>) {
        match (self, outcome) {
            (Expect::Ok, Ok(_)) | (Expect::TimesOut, Err(Error::Timeout { .. })) => {}
            (Expect::Fails(_, matches), Err(e)) if matches(e) => {}
            (Expect::Fails(expected, _), _) => {
                panic!("{name}: expected {expected}, got {outcome:?}")
            }
            (_, _) => panic!("{name}: got {outcome:?}"),
        }
    }
}

/// A case of the HTTP tables.
pub(crate) struct Case {
    pub(crate) name: &'static str,
    /// Whether the case's request is `tools/call` (a request that is not retried) rather
    /// than `tools/list`.
    pub(crate) call: bool,
    pub(crate) reply: fn(&Seen) -> Reply,
    pub(crate) expect: Expect,
}

/// A case whose request is `tools/list`.
pub(crate) const fn list(name: &'static str, reply: fn(&Seen) -> Reply, expect: Expect) -> Case {
    Case {
        name,
        call: false,
        reply,
        expect,
    }
}

/// A case whose request is `tools/call`.
pub(crate) const fn call(name: &'static str, reply: fn(&Seen) -> Reply, expect: Expect) -> Case {
    Case {
        name,
        call: true,
        reply,
        expect,
    }
}

/// Makes the HTTP case's request with `client` (whose server answers it with the case's
/// reply), checks the outcome, then that a valid request on the same client succeeds: a
/// `tools/list` for the cursor `probe`, which the suites' servers answer validly.
pub(crate) async fn check(client: &Client, case: &Case) {
    let name = case.name;
    let outcome = if case.call {
        client
            .call_tool("t", mcp_types::JsonObject::new())
            .await
            .map(|_| ())
    } else {
        client.list_tools(None).await.map(|_| ())
    };
    case.expect.assert(name, &outcome);
    let probe = client.list_tools(Some("probe")).await;
    assert!(probe.is_ok(), "{name}: the request after it: {probe:?}");
}

/// What the server of a stdio case writes for each request of the call that it reads.
#[derive(Clone, Copy)]
pub(crate) enum Answer {
    /// These lines, made from the request.
    Lines(fn(&Value) -> Vec<Vec<u8>>),
    /// These lines, made from the request and the suite's valid response line to it (the
    /// valid response differs by era).
    AroundValid(fn(&Value, Vec<u8>) -> Vec<Vec<u8>>),
}

/// How the client answers the server's own requests in a stdio case.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Answered {
    /// With a result that passes this check.
    Result(fn(&Value) -> bool),
    /// With this JSON-RPC error code.
    Error(i64),
}

/// A case of the stdio tables: one hostile answer and its outcome. `A` is the suite's kind
/// of call.
pub(crate) struct LineCase<A> {
    pub(crate) name: &'static str,
    pub(crate) ask: A,
    pub(crate) answer: Answer,
    /// How many requests of the call the server reads and answers (MRTR rounds, pages).
    pub(crate) rounds: usize,
    /// How many of the server's own requests the client then answers, and how.
    pub(crate) answers: usize,
    pub(crate) answered: Answered,
    pub(crate) expect: Expect,
}

/// A stdio case of one round, in which the server sends no requests of its own (or only
/// ones that the client refuses as unknown, -32601, when `answers` is set).
pub(crate) const fn line_case<A>(
    name: &'static str,
    ask: A,
    answer: fn(&Value) -> Vec<Vec<u8>>,
    expect: Expect,
) -> LineCase<A> {
    around(name, ask, Answer::Lines(answer), expect)
}

const fn around<A>(name: &'static str, ask: A, answer: Answer, expect: Expect) -> LineCase<A> {
    LineCase {
        name,
        ask,
        answer,
        rounds: 1,
        answers: 0,
        answered: Answered::Error(-32601),
        expect,
    }
}

/// `message` as a line.
pub(crate) fn line(message: &Value) -> Vec<u8> {
    message.to_string().into_bytes()
}

/// `depth` nested arrays, as text (serde_json would recurse to build it).
pub(crate) fn nested(depth: usize) -> String {
    format!("{}{}", "[".repeat(depth), "]".repeat(depth))
}

/// Plays the stdio case `case` (named `name` in failures) against `call`, the case's call
/// already made: answers its rounds with the case's lines (`valid` makes the suite's valid
/// response to a request), checks the client's answers to the server's own requests, then
/// the call's outcome and, when it timed out, that the client withdrew it.
pub(crate) async fn play<A, T: Debug>(
    script: &mut Script,
    case: &LineCase<A>,
    name: &str,
    valid: fn(&Value) -> Vec<u8>,
    call: JoinHandle<Result<T, Error>>,
) {
    let mut last = Value::Null;
    for _ in 0..case.rounds {
        last = script.request().await;
        let lines = match case.answer {
            Answer::Lines(lines) => lines(&last),
            Answer::AroundValid(lines) => lines(&last, valid(&last)),
        };
        for line in lines {
            script.line(&line).await;
        }
    }
    for _ in 0..case.answers {
        let answer = script.request().await;
        assert!(
            answer["id"].as_str().is_some_and(|id| id.starts_with('s')),
            "{name}: an answer to the server's request: {answer}"
        );
        match case.answered {
            Answered::Error(code) => assert_eq!(answer["error"]["code"], code, "{name}: {answer}"),
            Answered::Result(ok) => assert!(ok(&answer["result"]), "{name}: {answer}"),
        }
    }
    let outcome = call.await.expect("the call must not panic");
    case.expect.assert(name, &outcome);
    if matches!(case.expect, Expect::TimesOut) {
        let cancelled = script.request().await;
        assert_eq!(
            cancelled["method"], "notifications/cancelled",
            "{name}: {cancelled}"
        );
        assert_eq!(cancelled["params"]["requestId"], last["id"], "{name}");
    }
}

/// The cases of every stdio table, whatever the era: framing and envelopes around the
/// valid response, and errors that are data whatever their size. `ask` is the call whose
/// response comes; `unanswered` the call whose response is never recognised, so that it
/// times out.
pub(crate) fn common_line_cases<A: Copy>(ask: A, unanswered: A) -> Vec<LineCase<A>> {
    vec![
        // Framing: lines that are not messages are dropped, the response after them read.
        around(
            "invalid UTF-8 and NUL bytes",
            ask,
            Answer::AroundValid(|_, valid| {
                vec![b"\xff\xfe{\x00}".to_vec(), b"\0\0".to_vec(), valid]
            }),
            Expect::Ok,
        ),
        around(
            "blank lines, whitespace and CRLF",
            ask,
            Answer::AroundValid(|_, valid| {
                vec![
                    Vec::new(),
                    b" \t ".to_vec(),
                    [valid, b"\r".to_vec()].concat(),
                ]
            }),
            Expect::Ok,
        ),
        around(
            "a response behind a byte-order mark",
            unanswered,
            Answer::AroundValid(|_, valid| vec![[b"\xef\xbb\xbf".to_vec(), valid].concat()]),
            Expect::TimesOut,
        ),
        around(
            "the response as a batch",
            unanswered,
            Answer::AroundValid(|_, valid| {
                vec![format!("[{}]", String::from_utf8_lossy(&valid)).into_bytes()]
            }),
            Expect::TimesOut,
        ),
        around(
            "the response twice",
            ask,
            Answer::AroundValid(|_, valid| vec![valid.clone(), valid]),
            Expect::Ok,
        ),
        // Ids: only the request's own id is its response.
        around(
            "only a response whose id is the string form",
            unanswered,
            Answer::AroundValid(|request, valid| {
                let mut message: Value = serde_json::from_slice(&valid).unwrap();
                message["id"] = json!(request["id"].to_string());
                vec![line(&message)]
            }),
            Expect::TimesOut,
        ),
        // Errors are data, whatever their size; one the client would have to recurse into
        // is dropped.
        line_case(
            "an error with a 100 kB message",
            ask,
            |r| {
                vec![line(&response(
                    r,
                    json!({"error": {"code": -32603, "message": "m".repeat(100_000)}}),
                ))]
            },
            Expect::Fails("Protocol(-32603)", |e| {
                e.protocol()
                    .is_some_and(|p| p.code.0 == -32603 && p.message.len() == 100_000)
            }),
        ),
        line_case(
            "an error whose data nests 100 000 levels",
            unanswered,
            |r| {
                vec![format!(r#"{{"jsonrpc":"2.0","id":{},"error":{{"code":-32603,"message":"x","data":{}}}}}"#, r["id"], nested(100_000)).into_bytes()]
            },
            Expect::TimesOut,
        ),
    ]
}
