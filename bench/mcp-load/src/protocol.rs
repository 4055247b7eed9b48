//! The messages the driver sends and the checks on what comes back.

use std::borrow::Cow;

use serde::Deserialize;
use serde::de::IgnoredAny;

/// The revision the `modern` era speaks.
pub const MODERN: &str = "2026-07-28";
/// The revision the `legacy` era asks for in `initialize`.
pub const LEGACY: &str = "2025-11-25";

/// Which protocol era the driver speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Era {
    /// 2026-07-28: `_meta` on every request, no handshake.
    Modern,
    /// `initialize` and `notifications/initialized` first.
    Legacy,
}

impl Era {
    pub fn parse(text: &str) -> Result<Self, String> {
        match text {
            "modern" => Ok(Self::Modern),
            "legacy" => Ok(Self::Legacy),
            _ => Err(format!("unknown era {text:?} (modern or legacy)")),
        }
    }

    pub fn protocol_version(self) -> &'static str {
        match self {
            Self::Modern => MODERN,
            Self::Legacy => LEGACY,
        }
    }
}

/// The text the `echo` calls send: `len` bytes of plain ASCII that JSON needs no escape
/// for.
pub fn payload(len: usize) -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    (0..len)
        .map(|i| char::from(ALPHABET[i % ALPHABET.len()]))
        .collect()
}

/// A `tools/call` of `echo` with the id spliced in: everything before and after the id.
pub struct CallTemplate {
    head: Vec<u8>,
    tail: Vec<u8>,
}

impl CallTemplate {
    pub fn new(era: Era, text: &str) -> Self {
        let arguments = serde_json::json!({ "text": text });
        let mut params = serde_json::json!({ "name": "echo", "arguments": arguments });
        if era == Era::Modern {
            params["_meta"] = serde_json::json!({
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {},
            });
        }
        let mut tail = br#","method":"tools/call","params":"#.to_vec();
        tail.extend_from_slice(params.to_string().as_bytes());
        tail.push(b'}');
        Self {
            head: br#"{"jsonrpc":"2.0","id":"#.to_vec(),
            tail,
        }
    }

    /// Appends the request with `id` to `out`, without a line end.
    pub fn write(&self, id: u64, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.head);
        out.extend_from_slice(id.to_string().as_bytes());
        out.extend_from_slice(&self.tail);
    }
}

/// The `initialize` request of the legacy era.
pub fn initialize(id: u64) -> Vec<u8> {
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": "initialize",
        "params": {
            "protocolVersion": LEGACY,
            "capabilities": {},
            "clientInfo": { "name": "mcp-load", "version": "0.1.0" },
        },
    })
    .to_string()
    .into_bytes()
}

/// The `notifications/initialized` notification of the legacy era.
pub fn initialized() -> Vec<u8> {
    br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_vec()
}

#[derive(Deserialize)]
struct Reply<'a> {
    id: Option<serde_json::Value>,
    #[serde(borrow)]
    result: Option<ReplyResult<'a>>,
    error: Option<IgnoredAny>,
    method: Option<IgnoredAny>,
}

#[derive(Deserialize)]
struct ReplyResult<'a> {
    #[serde(borrow, default)]
    content: Vec<Content<'a>>,
    #[serde(rename = "isError", default)]
    is_error: bool,
    #[serde(rename = "protocolVersion")]
    protocol_version: Option<IgnoredAny>,
}

#[derive(Deserialize)]
struct Content<'a> {
    #[serde(borrow)]
    text: Option<Cow<'a, str>>,
}

/// What one message from the server was.
#[derive(Debug, PartialEq, Eq)]
pub enum Received {
    /// A successful reply to request `id`.
    Reply(u64),
    /// A notification or a request from the server: not counted.
    Other,
}

/// Checks one message: a notification passes as [`Received::Other`]; a reply must carry
/// an integer id, no error, and (unless it answers `initialize`) the text `expected` as
/// its first content block.
pub fn check(message: &[u8], expected: &str) -> Result<Received, String> {
    let reply: Reply<'_> = serde_json::from_slice(message).map_err(|e| {
        format!(
            "unreadable message ({e}): {}",
            String::from_utf8_lossy(&message[..message.len().min(200)])
        )
    })?;
    if reply.method.is_some() {
        return Ok(Received::Other);
    }
    let short = || String::from_utf8_lossy(&message[..message.len().min(300)]).into_owned();
    let id = reply
        .id
        .as_ref()
        .and_then(serde_json::Value::as_u64)
        .ok_or_else(|| format!("reply without an integer id: {}", short()))?;
    if reply.error.is_some() {
        return Err(format!("error reply: {}", short()));
    }
    let result = reply
        .result
        .ok_or_else(|| format!("reply without a result: {}", short()))?;
    if result.protocol_version.is_some() {
        return Ok(Received::Reply(id));
    }
    if result.is_error {
        return Err(format!("tool error: {}", short()));
    }
    match result.content.first().and_then(|c| c.text.as_deref()) {
        Some(text) if text == expected => Ok(Received::Reply(id)),
        Some(text) => Err(format!(
            "reply {id} carries {} bytes of text that are not the {} bytes sent",
            text.len(),
            expected.len()
        )),
        None => Err(format!(
            "reply {id} without a text content block: {}",
            short()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_template_makes_valid_requests() {
        let t = CallTemplate::new(Era::Modern, "hi");
        let mut out = Vec::new();
        t.write(42, &mut out);
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["id"], 42);
        assert_eq!(v["method"], "tools/call");
        assert_eq!(v["params"]["arguments"]["text"], "hi");
        assert_eq!(
            v["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
            MODERN
        );
        let mut out = Vec::new();
        CallTemplate::new(Era::Legacy, "hi").write(1, &mut out);
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert!(v["params"].get("_meta").is_none());
    }

    #[test]
    fn payloads_have_the_asked_length() {
        assert_eq!(payload(16).len(), 16);
        assert_eq!(payload(65_536).len(), 65_536);
    }

    #[test]
    fn checks() {
        let ok = br#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"hi"}]}}"#;
        assert_eq!(check(ok, "hi"), Ok(Received::Reply(3)));
        assert!(check(ok, "ho").unwrap_err().contains("not the"));
        let err = br#"{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"no"}}"#;
        assert!(check(err, "hi").unwrap_err().contains("error reply"));
        let tool_err =
            br#"{"jsonrpc":"2.0","id":3,"result":{"isError":true,"content":[{"type":"text","text":"hi"}]}}"#;
        assert!(check(tool_err, "hi").is_err());
        let note = br#"{"jsonrpc":"2.0","method":"notifications/message","params":{}}"#;
        assert_eq!(check(note, "hi"), Ok(Received::Other));
        let init = br#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{}}}"#;
        assert_eq!(check(init, "hi"), Ok(Received::Reply(0)));
        assert!(check(b"not json", "hi").is_err());
        assert!(check(br#"{"jsonrpc":"2.0","id":"x","result":{}}"#, "hi").is_err());
    }
}
