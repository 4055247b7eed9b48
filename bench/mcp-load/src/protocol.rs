//! The messages the driver sends (the checks on what comes back are `check.rs`).

use std::io::Write as _;

use serde_json::Value;

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

/// What every request of a run is: the method and its params (without `_meta`).
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    /// The JSON-RPC method, such as `tools/call` or `tools/list`.
    pub method: String,
    /// The params without `_meta`; the template adds it.
    pub params: Value,
    /// Ask for progress: `_meta.progressToken` is the request's id.
    pub progress: bool,
}

impl Call {
    /// A `tools/call` of `tool` with `arguments`.
    pub fn tool(tool: &str, arguments: Value) -> Self {
        Self {
            method: "tools/call".to_owned(),
            params: Value::Object(serde_json::Map::from_iter([
                ("name".to_owned(), Value::from(tool)),
                ("arguments".to_owned(), arguments),
            ])),
            progress: false,
        }
    }

    /// The `Mcp-Name` header of the 2026-07-28 HTTP transport: the tool's name of a
    /// `tools/call`, the URI of a `resources/read`, the prompt's name of a `prompts/get`.
    pub fn mcp_name(&self) -> Option<&str> {
        let key = match self.method.as_str() {
            "tools/call" | "prompts/get" => "name",
            "resources/read" => "uri",
            _ => return None,
        };
        self.params.get(key).and_then(Value::as_str)
    }
}

/// The id every request is built with before it is split around it: a number no argument
/// of the benchmark holds (the payload's alphabet runs `…0123456789abc…`).
const ID_SENTINEL: u64 = 1_234_567_890_123_456_789;

/// A request with its id spliced in (once, or twice with the id as the progress token):
/// the bytes between the splices.
pub struct CallTemplate {
    parts: Vec<Vec<u8>>,
}

impl CallTemplate {
    pub fn new(era: Era, call: &Call) -> Result<Self, String> {
        let mut params = match &call.params {
            Value::Object(map) => map.clone(),
            other => return Err(format!("the params must be an object, not {other}")),
        };
        if params.contains_key("_meta") {
            return Err("the params must not carry _meta: the driver adds it".to_owned());
        }
        let mut meta = serde_json::Map::new();
        if era == Era::Modern {
            meta.insert(
                "io.modelcontextprotocol/protocolVersion".to_owned(),
                Value::from(MODERN),
            );
            meta.insert(
                "io.modelcontextprotocol/clientCapabilities".to_owned(),
                serde_json::json!({}),
            );
        }
        if call.progress {
            meta.insert("progressToken".to_owned(), Value::from(ID_SENTINEL));
        }
        if !meta.is_empty() {
            params.insert("_meta".to_owned(), Value::Object(meta));
        }
        let request = serde_json::json!({
            "jsonrpc": "2.0",
            "id": ID_SENTINEL,
            "method": call.method,
            "params": params,
        });
        let text = request.to_string();
        let sentinel = ID_SENTINEL.to_string();
        let parts: Vec<Vec<u8>> = text
            .split(&sentinel)
            .map(|part| part.as_bytes().to_vec())
            .collect();
        let expected = if call.progress { 3 } else { 2 };
        if parts.len() != expected {
            return Err(format!(
                "the arguments hold the driver's id sentinel {sentinel}; choose others"
            ));
        }
        Ok(Self { parts })
    }

    /// Appends the request with `id` to `out`, without a line end.
    pub fn write(&self, id: u64, out: &mut Vec<u8>) {
        for (i, part) in self.parts.iter().enumerate() {
            if i > 0 {
                // Writing to a Vec cannot fail.
                let _ = write!(out, "{id}");
            }
            out.extend_from_slice(part);
        }
    }
}

/// The request for the page at `cursor` of a listing `call` started: `call` with
/// `params.cursor`, as request `id`.
pub fn next_page(era: Era, call: &Call, cursor: &str, id: u64) -> Result<Vec<u8>, String> {
    let mut call = call.clone();
    if let Value::Object(params) = &mut call.params {
        params.insert("cursor".to_owned(), Value::from(cursor));
    }
    let mut out = Vec::new();
    CallTemplate::new(era, &call)?.write(id, &mut out);
    Ok(out)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn echo(text: &str) -> Call {
        Call::tool("echo", serde_json::json!({ "text": text }))
    }

    #[test]
    fn the_template_makes_valid_requests() {
        let t = CallTemplate::new(Era::Modern, &echo("hi")).unwrap();
        let mut out = Vec::new();
        t.write(42, &mut out);
        let v: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["id"], 42);
        assert_eq!(v["method"], "tools/call");
        assert_eq!(v["params"]["arguments"]["text"], "hi");
        assert_eq!(
            v["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
            MODERN
        );
        assert!(v["params"]["_meta"].get("progressToken").is_none());
        let mut out = Vec::new();
        CallTemplate::new(Era::Legacy, &echo("hi"))
            .unwrap()
            .write(1, &mut out);
        let v: Value = serde_json::from_slice(&out).unwrap();
        assert!(v["params"].get("_meta").is_none());
    }

    #[test]
    fn templates_for_other_methods_and_progress() {
        let list = Call {
            method: "tools/list".to_owned(),
            params: serde_json::json!({}),
            progress: false,
        };
        let mut out = Vec::new();
        CallTemplate::new(Era::Modern, &list)
            .unwrap()
            .write(7, &mut out);
        let v: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["method"], "tools/list");
        assert_eq!(v["id"], 7);
        assert_eq!(list.mcp_name(), None);

        let mut call = Call::tool("steps", serde_json::json!({ "steps": 3 }));
        call.progress = true;
        assert_eq!(call.mcp_name(), Some("steps"));
        for era in [Era::Modern, Era::Legacy] {
            let mut out = Vec::new();
            CallTemplate::new(era, &call).unwrap().write(9, &mut out);
            let v: Value = serde_json::from_slice(&out).unwrap();
            assert_eq!(v["id"], 9);
            assert_eq!(v["params"]["_meta"]["progressToken"], 9);
            assert_eq!(v["params"]["arguments"]["steps"], 3);
        }
    }

    #[test]
    fn next_pages() {
        let list = Call {
            method: "tools/list".to_owned(),
            params: serde_json::json!({}),
            progress: false,
        };
        let out = next_page(Era::Modern, &list, "abc", 12).unwrap();
        let v: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["id"], 12);
        assert_eq!(v["params"]["cursor"], "abc");
        assert_eq!(
            v["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
            MODERN
        );
    }

    #[test]
    fn templates_refuse_what_they_cannot_splice() {
        let sentinel = Call::tool("echo", serde_json::json!({ "n": ID_SENTINEL }));
        assert!(CallTemplate::new(Era::Modern, &sentinel).is_err());
        let mut meta = echo("hi");
        meta.params["_meta"] = serde_json::json!({});
        assert!(CallTemplate::new(Era::Modern, &meta).is_err());
        let mut array = echo("hi");
        array.params = serde_json::json!([]);
        assert!(CallTemplate::new(Era::Modern, &array).is_err());
    }

    #[test]
    fn payloads_have_the_asked_length() {
        assert_eq!(payload(16).len(), 16);
        assert_eq!(payload(65_536).len(), 65_536);
        assert!(!payload(65_536).contains(&ID_SENTINEL.to_string()));
    }
}
