//! The messages a shared change bus (`RedisChangeBus`) publishes on its channel: one JSON
//! object per event, naming the instance that sent it, read back strictly, since whatever
//! can publish on the channel can write one.
//!
//! ```text
//! {"v":1,"from":"<32 hex digits>","kind":"toolsListChanged"}
//! {"v":1,"from":"<32 hex digits>","kind":"resourceUpdated","uri":"file:///notes.txt"}
//! {"v":1,"from":"<32 hex digits>","kind":"resync","at":1767225600000}
//! ```
//!
//! `at`, when present, is when the sender published the message (Unix milliseconds, by
//! its clock): the receiver's bus lag (`mcp_server_bus_lag_seconds`, feature `metrics`).
//!
//! `kind` is `toolsListChanged`, `promptsListChanged`, `resourcesListChanged`,
//! `resourceUpdated` (with `uri`, passed on as it is) or `resync` (the sender lost changes
//! it could not publish). A message longer than the bound, not JSON, with a member too many
//! or too few, a member twice, another version, a sender that is not 32 lowercase hex
//! digits, or a kind this version does not know is refused whole.

use serde::{Deserialize, Serialize};

use super::{BusEvent, Change};

/// The version of the messages written and the only one read.
const VERSION: u64 = 1;

/// The length of an instance id: 16 random bytes in lowercase hex.
pub(crate) const ID_LEN: usize = 32;

/// The longest message read (and written) by default: 64 KiB, room for any sensible URI.
pub(crate) const DEFAULT_MAX_MESSAGE_BYTES: usize = 64 << 10;

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Wire {
    v: u64,
    from: String,
    kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    uri: Option<String>,
    /// When it was published, Unix milliseconds: the receiver's bus lag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    at: Option<u64>,
}

/// A message read from the channel.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Message {
    /// The instance that published it.
    pub(crate) from: String,
    pub(crate) event: BusEvent,
    /// When it was published, Unix milliseconds, by the sender's clock.
    pub(crate) sent_ms: Option<u64>,
}

/// A fresh instance id, or `None` when the operating system's random source fails.
pub(crate) fn new_id() -> Option<String> {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut bytes = [0u8; ID_LEN / 2];
    getrandom::fill(&mut bytes).ok()?;
    Some(
        bytes
            .iter()
            .flat_map(|b| [HEX[usize::from(b >> 4)], HEX[usize::from(b & 15)]])
            .map(char::from)
            .collect(),
    )
}

fn is_id(text: &str) -> bool {
    text.len() == ID_LEN && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// `event` from instance `from` as a message, stamped with the time.
pub(crate) fn encode(from: &str, event: &BusEvent) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .ok()
        .and_then(|d| u64::try_from(d.as_millis()).ok());
    encode_at(from, event, now)
}

/// `event` from instance `from` as a message, stamped with `at` when given.
pub(crate) fn encode_at(from: &str, event: &BusEvent, at: Option<u64>) -> String {
    let (kind, uri) = match event {
        BusEvent::Change(Change::ToolsListChanged) => ("toolsListChanged", None),
        BusEvent::Change(Change::PromptsListChanged) => ("promptsListChanged", None),
        BusEvent::Change(Change::ResourcesListChanged) => ("resourcesListChanged", None),
        BusEvent::Change(Change::ResourceUpdated { uri }) => ("resourceUpdated", Some(uri)),
        BusEvent::Resync => ("resync", None),
    };
    let wire = Wire {
        v: VERSION,
        from: from.to_owned(),
        kind: kind.to_owned(),
        uri: uri.cloned(),
        at,
    };
    // A struct of strings and a number always serializes.
    serde_json::to_string(&wire).unwrap_or_default()
}

/// Reads a message of at most `max` bytes, or says why it is refused.
pub(crate) fn decode(bytes: &[u8], max: usize) -> Result<Message, String> {
    if bytes.len() > max {
        return Err(format!("{} bytes, past the limit of {max}", bytes.len()));
    }
    // serde reads a struct from an array of its members too; only the object is a message.
    if bytes.trim_ascii_start().first() != Some(&b'{') {
        return Err("not a JSON object".to_owned());
    }
    let wire: Wire = serde_json::from_slice(bytes).map_err(|e| format!("unreadable: {e}"))?;
    if wire.v != VERSION {
        return Err(format!(
            "version {} (this instance reads {VERSION})",
            wire.v
        ));
    }
    if !is_id(&wire.from) {
        return Err("the sender is not 32 lowercase hex digits".to_owned());
    }
    let event = match (wire.kind.as_str(), wire.uri) {
        ("toolsListChanged", None) => BusEvent::Change(Change::ToolsListChanged),
        ("promptsListChanged", None) => BusEvent::Change(Change::PromptsListChanged),
        ("resourcesListChanged", None) => BusEvent::Change(Change::ResourcesListChanged),
        ("resourceUpdated", Some(uri)) => BusEvent::Change(Change::ResourceUpdated { uri }),
        ("resync", None) => BusEvent::Resync,
        ("resourceUpdated", None) => return Err("resourceUpdated without a uri".to_owned()),
        (
            "toolsListChanged" | "promptsListChanged" | "resourcesListChanged" | "resync",
            Some(_),
        ) => return Err(format!("{} with a uri", wire.kind)),
        (kind, _) => return Err(format!("unknown kind {kind:?}")),
    };
    Ok(Message {
        from: wire.from,
        event,
        sent_ms: wire.at,
    })
}

#[cfg(test)]
mod tests {
    use super::{
        BusEvent, Change, DEFAULT_MAX_MESSAGE_BYTES, Message, decode, encode, encode_at, new_id,
    };
    use serde_json::json;

    const ID: &str = "0123456789abcdef0123456789abcdef";

    fn check(json: &serde_json::Value, expected: Result<BusEvent, &str>) {
        let text = json.to_string();
        match (decode(text.as_bytes(), DEFAULT_MAX_MESSAGE_BYTES), expected) {
            (Ok(message), Ok(event)) => assert_eq!(
                message,
                Message {
                    from: ID.to_owned(),
                    event,
                    sent_ms: None,
                },
                "{text}"
            ),
            (Err(reason), Err(expected)) => {
                assert!(reason.contains(expected), "{text}: {reason}");
            }
            (got, expected) => panic!("{text}: got {got:?}, expected {expected:?}"),
        }
    }

    #[test]
    fn every_event_is_written_as_its_golden_json_and_read_back() {
        let cases = [
            (
                BusEvent::Change(Change::ToolsListChanged),
                json!({"v": 1, "from": ID, "kind": "toolsListChanged"}),
            ),
            (
                BusEvent::Change(Change::PromptsListChanged),
                json!({"v": 1, "from": ID, "kind": "promptsListChanged"}),
            ),
            (
                BusEvent::Change(Change::ResourcesListChanged),
                json!({"v": 1, "from": ID, "kind": "resourcesListChanged"}),
            ),
            (
                BusEvent::Change(Change::ResourceUpdated {
                    uri: "file:///a b?c=\"d\"#é".into(),
                }),
                json!({"v": 1, "from": ID, "kind": "resourceUpdated", "uri": "file:///a b?c=\"d\"#é"}),
            ),
            (
                BusEvent::Resync,
                json!({"v": 1, "from": ID, "kind": "resync"}),
            ),
        ];
        for (event, golden) in cases {
            let text = encode_at(ID, &event, None);
            assert_eq!(
                serde_json::from_str::<serde_json::Value>(&text).unwrap(),
                golden
            );
            check(&golden, Ok(event));
        }
        // The publication time, when stamped, is written and read back.
        let stamped = encode_at(ID, &BusEvent::Resync, Some(1_700_000_000_123));
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&stamped).unwrap(),
            json!({"v": 1, "from": ID, "kind": "resync", "at": 1_700_000_000_123_u64})
        );
        let read = decode(stamped.as_bytes(), DEFAULT_MAX_MESSAGE_BYTES).unwrap();
        assert_eq!(read.sent_ms, Some(1_700_000_000_123));
        assert!(
            encode(ID, &BusEvent::Resync).contains("\"at\":"),
            "encode stamps the time"
        );
    }

    #[test]
    fn anything_but_a_well_formed_message_of_this_version_is_refused() {
        let cases = [
            (json!({"v": 2, "from": ID, "kind": "resync"}), "version 2"),
            (
                json!({"v": "1", "from": ID, "kind": "resync"}),
                "unreadable",
            ),
            (json!({"from": ID, "kind": "resync"}), "missing field `v`"),
            (json!({"v": 1, "kind": "resync"}), "missing field `from`"),
            (json!({"v": 1, "from": ID}), "missing field `kind`"),
            (
                json!({"v": 1, "from": ID, "kind": "resync", "extra": 1}),
                "unknown field `extra`",
            ),
            (
                json!({"v": 1, "from": ID.to_uppercase(), "kind": "resync"}),
                "hex",
            ),
            (json!({"v": 1, "from": "abc", "kind": "resync"}), "hex"),
            (
                json!({"v": 1, "from": format!("{ID}0"), "kind": "resync"}),
                "hex",
            ),
            (
                json!({"v": 1, "from": ID, "kind": "toolsChanged"}),
                "unknown kind",
            ),
            (
                json!({"v": 1, "from": ID, "kind": "resourceUpdated"}),
                "without a uri",
            ),
            (
                json!({"v": 1, "from": ID, "kind": "resourceUpdated", "uri": 5}),
                "unreadable",
            ),
            (
                json!({"v": 1, "from": ID, "kind": "toolsListChanged", "uri": "x:y"}),
                "with a uri",
            ),
            (json!([1, ID, "resync"]), "not a JSON object"),
            (json!(null), "not a JSON object"),
        ];
        for (json, reason) in cases {
            check(&json, Err(reason));
        }
        for bytes in [
            &b""[..],
            b"not json",
            b"\xff\xfe",
            b"{\"v\":1,\"from\":\"0123456789abcdef0123456789abcdef\",\"kind\":\"resync\"} trailing",
            b"{\"v\":1,\"v\":1,\"from\":\"0123456789abcdef0123456789abcdef\",\"kind\":\"resync\"}",
            b"{\"v\":1,\"from\":\"0123456789abcdef0123456789abcdef\",\"kind\":\"resync\"",
        ] {
            assert!(
                decode(bytes, DEFAULT_MAX_MESSAGE_BYTES).is_err(),
                "{bytes:?}"
            );
        }
    }

    #[test]
    fn a_message_at_the_size_limit_is_read_and_one_byte_more_is_not() {
        assert_eq!(DEFAULT_MAX_MESSAGE_BYTES, 65_536);
        let frame = encode(
            ID,
            &BusEvent::Change(Change::ResourceUpdated { uri: String::new() }),
        );
        let uri = "u".repeat(DEFAULT_MAX_MESSAGE_BYTES - frame.len());
        let at = encode(
            ID,
            &BusEvent::Change(Change::ResourceUpdated { uri: uri.clone() }),
        );
        assert_eq!(at.len(), DEFAULT_MAX_MESSAGE_BYTES);
        assert_eq!(
            decode(at.as_bytes(), DEFAULT_MAX_MESSAGE_BYTES)
                .unwrap()
                .event,
            BusEvent::Change(Change::ResourceUpdated { uri: uri.clone() })
        );
        let past = encode(
            ID,
            &BusEvent::Change(Change::ResourceUpdated { uri: uri + "u" }),
        );
        let reason = decode(past.as_bytes(), DEFAULT_MAX_MESSAGE_BYTES).unwrap_err();
        assert!(
            reason.contains("65537 bytes, past the limit of 65536"),
            "{reason}"
        );
        // A limit of one's own holds the same way.
        assert!(decode(at.as_bytes(), 100).is_err());
    }

    #[test]
    fn no_cut_or_changed_byte_of_a_message_makes_decoding_panic() {
        let message = encode(
            ID,
            &BusEvent::Change(Change::ResourceUpdated {
                uri: "file:///é\\\"x".into(),
            }),
        );
        let bytes = message.as_bytes();
        for end in 0..bytes.len() {
            assert!(decode(&bytes[..end], DEFAULT_MAX_MESSAGE_BYTES).is_err());
        }
        for at in 0..bytes.len() {
            for byte in [
                0u8, b'"', b'\\', b'{', b'}', b'[', b':', b',', b'1', 0x80, 0xff,
            ] {
                let mut changed = bytes.to_vec();
                changed[at] = byte;
                let _ = decode(&changed, DEFAULT_MAX_MESSAGE_BYTES);
            }
        }
    }

    #[test]
    fn instance_ids_are_random_and_well_formed() {
        let (a, b) = (new_id().unwrap(), new_id().unwrap());
        assert_ne!(a, b);
        assert!(super::is_id(&a) && super::is_id(&b), "{a} {b}");
    }
}
