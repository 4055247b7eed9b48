//! `requestState`: sealed, bound and expiring (`docs/2026-07-28/basic/patterns/mrtr.mdx`).
//!
//! The state a handler carries across an `input_required` round trip comes back from the
//! client, so it is attacker-controlled. It is sealed with HMAC-SHA256 under a per-server
//! key and bound to the method, the tool/prompt/resource name, a digest of the arguments
//! (keys sorted, so a client that re-serializes them in another order still matches), the
//! authenticated principal when the transport authenticated the request, and an expiry.
//! Anything that fails to verify is refused with -32602, state sealed for another
//! principal included.
//!
//! Wire form: `base64url(payload) "." base64url(tag)`, payload `{"exp": unix seconds,
//! "app": <handler state>}`.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The secret that seals `requestState`.
#[derive(Clone)]
pub(crate) struct StateKey([u8; 32]);

impl std::fmt::Debug for StateKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StateKey(..)")
    }
}

/// What the state is bound to.
pub(crate) struct Binding<'a> {
    pub(crate) method: &'a str,
    pub(crate) name: &'a str,
    pub(crate) arguments: Option<&'a Value>,
    /// The [`id`](mcp_jsonrpc::Principal::id) of the principal that made the request, when
    /// the transport authenticated it.
    pub(crate) principal: Option<&'a str>,
}

/// Why a `requestState` was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StateError {
    Malformed,
    Forged,
    Expired,
}

impl StateError {
    pub(crate) fn message(self) -> &'static str {
        match self {
            StateError::Malformed => "requestState is malformed",
            StateError::Forged => "requestState does not belong to this request",
            StateError::Expired => "requestState has expired",
        }
    }
}

type HmacSha256 = Hmac<Sha256>;

impl StateKey {
    pub(crate) fn random() -> Result<Self, crate::Error> {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).map_err(|_| crate::Error::Random)?;
        Ok(StateKey(key))
    }

    pub(crate) fn from_bytes(key: [u8; 32]) -> Self {
        StateKey(key)
    }

    fn mac(&self, binding: &Binding<'_>, payload: &[u8]) -> HmacSha256 {
        let mut mac = <HmacSha256 as KeyInit>::new_from_slice(&self.0)
            .expect("HMAC takes keys of any length");
        mac.update(binding.method.as_bytes());
        mac.update(&[0]);
        mac.update(binding.name.as_bytes());
        mac.update(&[0]);
        mac.update(&arguments_digest(binding.arguments));
        mac.update(&[0]);
        // Unauthenticated state keeps the form it had before principals existed. An
        // authenticated one adds a marker and the length-prefixed id; the payload that
        // follows unmarked state is JSON and starts with `{`, never with the marker.
        if let Some(principal) = binding.principal {
            mac.update(&[1]);
            mac.update(&(principal.len() as u64).to_be_bytes());
            mac.update(principal.as_bytes());
        }
        mac.update(payload);
        mac
    }

    /// Seals `app` (the handler's state) for `binding`, valid for `ttl`.
    pub(crate) fn seal(&self, binding: &Binding<'_>, app: &Value, ttl: Duration) -> String {
        self.seal_at(binding, app, ttl, now())
    }

    fn seal_at(&self, binding: &Binding<'_>, app: &Value, ttl: Duration, now: u64) -> String {
        let exp = now.saturating_add(ttl.as_secs());
        let payload = serde_json::json!({ "exp": exp, "app": app }).to_string();
        let tag = self
            .mac(binding, payload.as_bytes())
            .finalize()
            .into_bytes();
        format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(payload),
            URL_SAFE_NO_PAD.encode(tag)
        )
    }

    /// Verifies a state the client sent back and returns the handler's state.
    pub(crate) fn open(&self, binding: &Binding<'_>, sealed: &str) -> Result<Value, StateError> {
        self.open_at(binding, sealed, now())
    }

    fn open_at(&self, binding: &Binding<'_>, sealed: &str, now: u64) -> Result<Value, StateError> {
        let (payload, tag) = sealed.split_once('.').ok_or(StateError::Malformed)?;
        let payload = URL_SAFE_NO_PAD
            .decode(payload)
            .map_err(|_| StateError::Malformed)?;
        let tag = URL_SAFE_NO_PAD
            .decode(tag)
            .map_err(|_| StateError::Malformed)?;
        // Constant-time comparison, by the MAC crate.
        self.mac(binding, &payload)
            .verify_slice(&tag)
            .map_err(|_| StateError::Forged)?;
        let value: Value = serde_json::from_slice(&payload).map_err(|_| StateError::Malformed)?;
        let exp = value["exp"].as_u64().ok_or(StateError::Malformed)?;
        if now > exp {
            return Err(StateError::Expired);
        }
        Ok(value.get("app").cloned().unwrap_or(Value::Null))
    }
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// SHA-256 of the arguments with object keys sorted at every level.
fn arguments_digest(arguments: Option<&Value>) -> [u8; 32] {
    fn canonical(value: &Value, out: &mut Vec<u8>) {
        match value {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                out.push(b'{');
                for key in keys {
                    out.extend_from_slice(Value::String(key.clone()).to_string().as_bytes());
                    out.push(b':');
                    canonical(&map[key], out);
                    out.push(b',');
                }
                out.push(b'}');
            }
            Value::Array(items) => {
                out.push(b'[');
                for item in items {
                    canonical(item, out);
                    out.push(b',');
                }
                out.push(b']');
            }
            other => out.extend_from_slice(other.to_string().as_bytes()),
        }
    }
    let mut bytes = Vec::new();
    if let Some(arguments) = arguments {
        canonical(arguments, &mut bytes);
    }
    Sha256::digest(&bytes).into()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::json;

    use super::{Binding, StateError, StateKey};

    #[test]
    fn sealed_state_opens_only_for_its_binding_and_before_expiry() {
        let key = StateKey::from_bytes([7; 32]);
        let args = json!({"b": 1, "a": [1, {"y": 2, "x": 1}]});
        let binding = Binding {
            method: "tools/call",
            name: "book",
            arguments: Some(&args),
            principal: None,
        };
        let sealed = key.seal(&binding, &json!({"step": 2}), Duration::from_mins(1));

        assert_eq!(key.open(&binding, &sealed), Ok(json!({"step": 2})));
        // The same arguments in another key order still match.
        let reordered = json!({"a": [1, {"x": 1, "y": 2}], "b": 1});
        let same = Binding {
            method: "tools/call",
            name: "book",
            arguments: Some(&reordered),
            principal: None,
        };
        assert_eq!(key.open(&same, &sealed), Ok(json!({"step": 2})));

        let other_args = json!({"b": 2, "a": [1, {"y": 2, "x": 1}]});
        let cases = [
            Binding {
                method: "tools/call",
                name: "book",
                arguments: Some(&other_args),
                principal: None,
            },
            Binding {
                method: "tools/call",
                name: "other",
                arguments: Some(&args),
                principal: None,
            },
            Binding {
                method: "prompts/get",
                name: "book",
                arguments: Some(&args),
                principal: None,
            },
            // The same request by an authenticated principal: unmarked state is not
            // theirs either.
            Binding {
                method: "tools/call",
                name: "book",
                arguments: Some(&args),
                principal: Some("https://as.example\nalice"),
            },
        ];
        for other in &cases {
            assert_eq!(key.open(other, &sealed), Err(StateError::Forged));
        }
        assert_eq!(
            StateKey::from_bytes([8; 32]).open(&binding, &sealed),
            Err(StateError::Forged)
        );

        let (payload, tag) = sealed.split_once('.').unwrap();
        let mut tampered = payload.to_owned();
        tampered.replace_range(0..1, if tampered.starts_with('A') { "B" } else { "A" });
        assert!(key.open(&binding, &format!("{tampered}.{tag}")).is_err());
        for garbage in ["", ".", "no-dot", "!!.!!", "eyJ9.AAAA"] {
            assert!(key.open(&binding, garbage).is_err(), "{garbage}");
        }

        let sealed_at = key.seal_at(&binding, &json!(null), Duration::from_secs(30), 1_000);
        assert_eq!(key.open_at(&binding, &sealed_at, 1_030), Ok(json!(null)));
        assert_eq!(
            key.open_at(&binding, &sealed_at, 1_031),
            Err(StateError::Expired)
        );
    }

    #[test]
    fn state_sealed_for_one_principal_is_refused_for_another() {
        let key = StateKey::from_bytes([7; 32]);
        let args = json!({"path": "/tmp/a"});
        let binding = |principal| Binding {
            method: "tools/call",
            name: "delete",
            arguments: Some(&args),
            principal,
        };
        let alice = binding(Some("https://as.example\nalice"));
        let sealed = key.seal(&alice, &json!({"confirmed": true}), Duration::from_mins(1));
        assert_eq!(key.open(&alice, &sealed), Ok(json!({"confirmed": true})));
        for other in [
            Some("https://as.example\nbob"),
            Some("https://as.example\nalic"),
            Some("https://other.example\nalice"),
            Some(""),
            None,
        ] {
            assert_eq!(
                key.open(&binding(other), &sealed),
                Err(StateError::Forged),
                "{other:?}"
            );
        }
    }
}
