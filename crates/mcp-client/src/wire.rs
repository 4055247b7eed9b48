//! A request's frame as [`mcp_jsonrpc::encode_request`] writes it, into a buffer sized
//! from the last frame written.

use std::sync::atomic::{AtomicUsize, Ordering};

use mcp_json as json;
use mcp_types::RequestId;
use serde::Serialize;

/// The length of the last request frame [`encode_request`] wrote: the next one's starting
/// capacity (capped at [`MAX_HINT`]), so that a frame is written into one allocation
/// instead of growing from 128 bytes twice or more.
static LAST_FRAME: AtomicUsize = AtomicUsize::new(0);

/// The largest starting capacity: one large request does not make every later small one
/// allocate as much.
const MAX_HINT: usize = 8 * 1024;

/// A request's frame, byte for byte what [`mcp_jsonrpc::encode_request`] writes for
/// `Some(params)` (tested below), with the envelope's member names written as they are
/// rather than escaped one by one, and the buffer sized from the last frame.
pub(crate) fn encode_request<P: Serialize + ?Sized>(
    id: &RequestId,
    method: &str,
    params: &P,
) -> Result<Vec<u8>, serde_json::Error> {
    // Room for a few more digits of the id than the last frame had.
    let hint = LAST_FRAME.load(Ordering::Relaxed).min(MAX_HINT) + 8;
    let mut frame = String::with_capacity(hint);
    frame.push_str(r#"{"jsonrpc":"2.0","id":"#);
    json::write(&mut frame, id)?;
    frame.push_str(r#","method":"#);
    json::write(&mut frame, method)?;
    frame.push_str(r#","params":"#);
    json::write(&mut frame, params)?;
    frame.push('}');
    LAST_FRAME.store(frame.len(), Ordering::Relaxed);
    Ok(frame.into_bytes())
}

#[cfg(test)]
mod tests {
    use mcp_types::{
        ClientCapabilities, ClientCapabilitiesElicitation, Implementation, InputResponse,
        InputResponses, JsonObject, LoggingLevel, OrderedMap, ProgressToken,
    };
    use serde_json::json;

    use super::*;
    use crate::client::Round;

    #[test]
    fn frames_are_the_engines_byte_for_byte() {
        let mut arguments = JsonObject::new();
        arguments.insert("text".to_owned(), json!("a \"quoted\" line\n"));
        let meta = crate::client::request_meta(
            &ClientCapabilities::default(),
            &Implementation::new("c", "1"),
            None,
            crate::SUPPORTED_VERSIONS[0],
            None,
            None,
        );
        let params = crate::client::tool_call_params("echo", &arguments)(meta, &Round::default());
        let ids = [
            RequestId::Integer(1),
            RequestId::Integer(-7),
            RequestId::Integer(i64::MAX),
            RequestId::String("a\"b".into()),
        ];
        for id in &ids {
            for method in ["tools/call", "x/\"odd\"\u{1}"] {
                let ours = encode_request(id, method, &params).unwrap();
                let engine = mcp_jsonrpc::encode_request(id, method, Some(&params)).unwrap();
                assert_eq!(ours, engine.as_ref());
                let value = json!({"k": [1, null]});
                let ours = encode_request(id, method, &value).unwrap();
                let engine = mcp_jsonrpc::encode_request(id, method, Some(&value)).unwrap();
                assert_eq!(ours, engine.as_ref());
            }
        }
        // A large frame after small ones, and a small one after it, come out whole.
        let big = json!({"text": "x".repeat(20_000)});
        let ours = encode_request(&ids[0], "m", &big).unwrap();
        assert_eq!(
            ours,
            mcp_jsonrpc::encode_request(&ids[0], "m", Some(&big))
                .unwrap()
                .as_ref()
        );
        let small = encode_request(&ids[0], "m", &json!({})).unwrap();
        assert_eq!(
            small,
            br#"{"jsonrpc":"2.0","id":1,"method":"m","params":{}}"#
        );
    }

    /// A `tools/call` frame as the client writes it (the typed params serialized by
    /// `serde_json` into [`encode_request`]'s envelope), to the byte: these are the bytes
    /// the hand-written writer it replaced wrote, so the wire stays as it was.
    #[test]
    fn tools_call_frames_are_written_to_the_byte() {
        let mut capabilities = ClientCapabilities::default();
        capabilities.elicitation = Some(ClientCapabilitiesElicitation::default());
        let mut info = Implementation::new("agent \"x\"", "1.0");
        info.title = Some("An agent\n".to_owned());
        // Members in the same order whether or not `serde_json` keeps insertion order.
        let mut arguments = JsonObject::new();
        arguments.insert("n".to_owned(), json!([1, 2.5, {"a": true, "z": null}]));
        arguments.insert("text".to_owned(), json!("héllo \u{1}"));
        let mut answers: InputResponses = OrderedMap::new();
        answers.insert(
            "k".to_owned(),
            serde_json::from_value::<InputResponse>(json!({"action": "decline"})).unwrap(),
        );
        let frame = |id: &RequestId,
                     level,
                     token,
                     trace: Option<&(String, Option<String>)>,
                     round: &Round| {
            let meta = crate::client::request_meta(
                &capabilities,
                &info,
                level,
                "2026-07-28",
                trace,
                token,
            );
            let params = crate::client::tool_call_params("echo", &arguments)(meta, round);
            let frame = encode_request(id, "tools/call", &params).unwrap();
            // The HTTP and custom transports make a `Value` of the params first.
            let value = serde_json::to_value(&params).unwrap();
            assert_eq!(encode_request(id, "tools/call", &value).unwrap(), frame);
            String::from_utf8(frame).unwrap()
        };
        // A call that adds nothing to the client's `_meta`.
        assert_eq!(
            frame(&RequestId::Integer(1), None, None, None, &Round::default()),
            concat!(
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"#,
                r#""io.modelcontextprotocol/clientCapabilities":{"elicitation":{}},"#,
                r#""io.modelcontextprotocol/clientInfo":{"name":"agent \"x\"","title":"An agent\n","version":"1.0"},"#,
                r#""io.modelcontextprotocol/protocolVersion":"2026-07-28"},"#,
                r#""arguments":{"n":[1,2.5,{"a":true,"z":null}],"text":"héllo \u0001"},"#,
                r#""name":"echo"}}"#,
            )
        );
        // One with everything: a log level, a progress token, trace context, and an MRTR
        // round's answers and state.
        let round = Round {
            responses: Some(answers),
            state: Some("opaque\"state".to_owned()),
        };
        let trace = ("00-ab-cd-01".to_owned(), Some("k=v".to_owned()));
        assert_eq!(
            frame(
                &RequestId::String("a\"b".into()),
                Some(LoggingLevel::Debug),
                Some(ProgressToken::String("progress-1".into())),
                Some(&trace),
                &round,
            ),
            concat!(
                r#"{"jsonrpc":"2.0","id":"a\"b","method":"tools/call","params":{"_meta":{"#,
                r#""io.modelcontextprotocol/clientCapabilities":{"elicitation":{}},"#,
                r#""io.modelcontextprotocol/clientInfo":{"name":"agent \"x\"","title":"An agent\n","version":"1.0"},"#,
                r#""io.modelcontextprotocol/logLevel":"debug","#,
                r#""io.modelcontextprotocol/protocolVersion":"2026-07-28","#,
                r#""progressToken":"progress-1","traceparent":"00-ab-cd-01","tracestate":"k=v"},"#,
                r#""arguments":{"n":[1,2.5,{"a":true,"z":null}],"text":"héllo \u0001"},"#,
                r#""inputResponses":{"k":{"action":"decline"}},"#,
                r#""name":"echo","requestState":"opaque\"state"}}"#,
            )
        );
    }
}
