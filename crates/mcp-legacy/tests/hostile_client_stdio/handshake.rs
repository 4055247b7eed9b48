//! The handshake table: the probe answered as a legacy server answers it, then
//! `initialize` answered with hostile content, on a fresh child each.

use mcp_client::Error;
use mcp_legacy::Error as ConnectError;
use mcp_legacy::client::StdioConnection;
use serde_json::{Value, json};

use super::support::script::response;
use super::support::{count_panics, panics};
use super::{
    handshake, initialize_result, line, nested, probe, raw_result, server_request, spawn, with_id,
};

/// A handshake case: its name, `initialize`'s answer (lines), and the connection's
/// outcome.
type HandshakeCase = (
    &'static str,
    fn(&Value) -> Vec<Vec<u8>>,
    fn(&Result<StdioConnection, ConnectError>) -> bool,
);

fn initialize_with(request: &Value, result: &Value) -> Vec<Vec<u8>> {
    vec![line(&response(request, json!({ "result": result })))]
}

fn malformed(outcome: &Result<StdioConnection, ConnectError>) -> bool {
    matches!(outcome, Err(ConnectError::Malformed(_)))
}

fn timed_out(outcome: &Result<StdioConnection, ConnectError>) -> bool {
    matches!(outcome, Err(ConnectError::Handshake(Error::Timeout { method, .. })) if method == "initialize")
}

#[allow(clippy::too_many_lines, reason = "one table")]
fn handshake_cases() -> Vec<HandshakeCase> {
    vec![
        (
            "an unsupported version",
            |r| {
                let mut result = initialize_result("2025-11-25");
                result["protocolVersion"] = json!("1999-01-01");
                initialize_with(r, &result)
            },
            |o| matches!(o, Err(ConnectError::UnsupportedVersion { answered, .. }) if answered == "1999-01-01"),
        ),
        (
            "the modern version",
            |r| initialize_with(r, &initialize_result("2026-07-28")),
            |o| matches!(o, Err(ConnectError::UnsupportedVersion { answered, .. }) if answered == "2026-07-28"),
        ),
        (
            "a numeric version",
            |r| {
                let mut result = initialize_result("2025-11-25");
                result["protocolVersion"] = json!(20_251_125);
                initialize_with(r, &result)
            },
            malformed,
        ),
        (
            "no capabilities",
            |r| {
                let mut result = initialize_result("2025-11-25");
                result.as_object_mut().map(|o| o.remove("capabilities"));
                initialize_with(r, &result)
            },
            malformed,
        ),
        (
            "capabilities that are not an object",
            |r| {
                let mut result = initialize_result("2025-11-25");
                result["capabilities"] = json!(["tools"]);
                initialize_with(r, &result)
            },
            malformed,
        ),
        (
            "serverInfo that is a string",
            |r| {
                let mut result = initialize_result("2025-11-25");
                result["serverInfo"] = json!("hostile 1.0");
                initialize_with(r, &result)
            },
            malformed,
        ),
        (
            "serverInfo without a name",
            |r| {
                let mut result = initialize_result("2025-11-25");
                result["serverInfo"] = json!({"version": "1"});
                initialize_with(r, &result)
            },
            malformed,
        ),
        (
            "a case-variant protocolVersion key",
            |r| {
                vec![raw_result(
                    r,
                    r#"{"ProtocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"h","version":"1"}}"#,
                )]
            },
            malformed,
        ),
        (
            "a protocolVersion key with a zero-width space",
            |r| {
                vec![raw_result(
                    r,
                    r#"{"protocolVersion\u200b":"2025-11-25","capabilities":{},"serverInfo":{"name":"h","version":"1"}}"#,
                )]
            },
            malformed,
        ),
        (
            "a duplicate protocolVersion key",
            |r| {
                vec![raw_result(
                    r,
                    r#"{"protocolVersion":"2025-11-25","protocolVersion":"1999-01-01","capabilities":{},"serverInfo":{"name":"h","version":"1"}}"#,
                )]
            },
            malformed,
        ),
        (
            "100 000 levels in the result",
            |r| {
                vec![raw_result(
                    r,
                    &format!(
                        r#"{{"protocolVersion":"2025-11-25","capabilities":{{}},"serverInfo":{{"name":"h","version":"1"}},"x":{}}}"#,
                        nested(100_000)
                    ),
                )]
            },
            malformed,
        ),
        (
            "an error",
            |r| {
                vec![line(&response(
                    r,
                    json!({"error": {"code": -32602, "message": "no"}}),
                ))]
            },
            |o| matches!(o, Err(ConnectError::Handshake(e)) if e.protocol().is_some_and(|p| p.code.0 == -32602)),
        ),
        (
            "a result to another id",
            |r| vec![with_id(r, json!(987_654))],
            timed_out,
        ),
        (
            "a result as a batch",
            |r| {
                let answer = line(&response(
                    r,
                    json!({ "result": initialize_result("2025-11-25") }),
                ));
                vec![[b"[".to_vec(), answer, b"]".to_vec()].concat()]
            },
            timed_out,
        ),
        (
            "stdout pollution and a ping before the result",
            |r| {
                vec![
                    b"starting hostile server v1".to_vec(),
                    line(&server_request("s1", "ping", Value::Null)),
                    line(&response(
                        r,
                        json!({ "result": initialize_result("2024-11-05") }),
                    )),
                ]
            },
            |o| matches!(o, Ok(c) if c.verdict.version == "2024-11-05"),
        ),
    ]
}

#[tokio::test]
async fn the_handshake_table() {
    count_panics();
    for (name, answer, expected) in handshake_cases() {
        let (connecting, mut script) = spawn().await;
        let initialize = handshake(&mut script).await;
        for line in answer(&initialize) {
            script.line(&line).await;
        }
        let outcome = connecting.await.unwrap();
        assert!(expected(&outcome), "{name}: {outcome:?}");
        if let Ok(connection) = outcome {
            // The ping before the result was answered, then the session works.
            let answer = script.request().await;
            assert_eq!(
                answer,
                json!({"jsonrpc": "2.0", "id": "s1", "result": {}}),
                "{name}"
            );
            assert_eq!(
                script.request().await["method"],
                "notifications/initialized"
            );
            probe(&connection.client, &mut script, name).await;
            // Dropped, not shut down: the process group is killed at once (a graceful stop
            // waits out the stdin grace, which these tests do not exercise).
            drop(connection);
        }
    }
    assert_eq!(panics(), 0, "nothing may panic, even caught");
}
