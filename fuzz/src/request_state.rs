//! `request_state`: unsealing a `requestState` the client sent back
//! (<https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr>); it is attacker-controlled.
//!
//! The input is `state \0 app-json`. Checks: nothing panics; arbitrary text never opens
//! (a forged state would need the sealing key); a state sealed here opens to exactly what
//! was sealed, only for the same binding (another method, name, argument or principal is
//! refused), and any change to its text is refused.

use mcp_server::fuzzing::{Bound, Sealer};
use serde_json::{Value, json};

fn bound() -> Bound {
    Bound {
        method: "tools/call".to_owned(),
        name: "ask".to_owned(),
        arguments: Some(json!({"b": 1, "a": [true, null]})),
        principal: Some("alice".to_owned()),
    }
}

/// One input: see the module docs.
pub fn run(input: &[u8]) {
    let sealer = Sealer::new([7; 32]);
    let text = String::from_utf8_lossy(input);
    let (state, app) = text.split_once('\0').unwrap_or((&text, "null"));
    assert!(
        sealer.open(&bound(), state).is_err(),
        "a forged state opened: {state:?}"
    );

    let Ok(app) = serde_json::from_str::<Value>(app) else {
        return;
    };
    let sealed = sealer.seal(&bound(), &app);
    assert_eq!(sealer.open(&bound(), &sealed).as_ref(), Ok(&app));
    for other in [
        Bound {
            method: "prompts/get".to_owned(),
            ..bound()
        },
        Bound {
            name: "asks".to_owned(),
            ..bound()
        },
        Bound {
            arguments: Some(json!({"b": 2, "a": [true, null]})),
            ..bound()
        },
        Bound {
            arguments: None,
            ..bound()
        },
        Bound {
            principal: Some("mallory".to_owned()),
            ..bound()
        },
        Bound {
            principal: None,
            ..bound()
        },
    ] {
        assert!(
            sealer.open(&other, &sealed).is_err(),
            "opened for {other:?}"
        );
    }
    // Arguments re-serialized in another key order are the same arguments.
    let reordered = Bound {
        arguments: Some(json!({"a": [true, null], "b": 1})),
        ..bound()
    };
    assert_eq!(sealer.open(&reordered, &sealed).as_ref(), Ok(&app));
    // Any single-character change is refused (flip each position of a short prefix and
    // one position chosen by the input).
    let bytes = sealed.as_bytes();
    let pick = input.len() % bytes.len();
    for index in (0..bytes.len().min(8)).chain([pick, bytes.len() - 1]) {
        let mut changed = bytes.to_vec();
        changed[index] = if changed[index] == b'A' { b'B' } else { b'A' };
        let changed = String::from_utf8(changed).expect("ASCII");
        if changed != sealed {
            assert!(
                sealer.open(&bound(), &changed).is_err(),
                "a changed state opened"
            );
        }
    }
}
