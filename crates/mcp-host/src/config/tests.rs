//! The parser's unit tests: every member, every error, substitution and the era choice.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use super::*;
use crate::OAuth;

fn env(name: &str) -> Option<String> {
    match name {
        "HOME" => Some("/home/ada".to_owned()),
        "EMPTY" => Some(String::new()),
        "TRICKY" => Some("${HOME}$$".to_owned()),
        _ => None,
    }
}

fn read(input: &Value) -> Result<Vec<(String, ServerConfig)>, Error> {
    HostConfig::from_value_with_env(input, &env).map(|c| c.servers)
}

fn one(entry: &Value) -> Result<ServerConfig, Error> {
    ServerConfig::from_value_with_env("s", entry, &env)
}

fn error(entry: &Value) -> String {
    match one(entry) {
        Ok(config) => panic!("accepted: {config:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn both_shapes_and_every_member() {
    let servers = read(&json!({"mcpServers": {
        "a": {"command": "srv", "args": ["-v"], "env": {"K": "V"}, "cwd": "/tmp",
              "extra": 1, "timeout": 1500, "protocolVersions": ["2025-06-18"],
              "allow": ["read_*"], "deny": ["read_secret"], "groups": ["files"]},
        "b": {"type": "http", "url": "http://x/mcp", "headers": {"Authorization": "t"}},
        "c": {"command": "off", "disabled": true},
        "d": {"type": "sse", "url": "http://x/sse"}
    }}))
    .unwrap();
    let expected = vec![
        (
            "a".to_owned(),
            ServerConfig::new(
                StdioConfig::new("srv")
                    .args(["-v"])
                    .env("K", "V")
                    .cwd("/tmp"),
            )
            .timeout(Duration::from_millis(1500))
            .protocol_versions(["2025-06-18"])
            .allow(["read_*"])
            .deny(["read_secret"])
            .groups(["files"]),
        ),
        (
            "b".to_owned(),
            HttpConfig::new("http://x/mcp")
                .header("Authorization", "t")
                .into(),
        ),
        (
            "d".to_owned(),
            HttpConfig {
                sse: true,
                ..HttpConfig::new("http://x/sse")
            }
            .into(),
        ),
    ];
    assert_eq!(servers, expected);
    // The VS Code shape reads the same.
    let vscode = read(
        &json!({"servers": {"b": {"type": "http", "url": "http://x/mcp",
        "headers": {"Authorization": "t"}}}}),
    )
    .unwrap();
    assert_eq!(vscode, expected[1..2]);
}

#[test]
fn top_level_errors() {
    for (input, message) in [
        (json!({}), "expected an `mcpServers`"),
        (json!([]), "expected a JSON object"),
        (
            json!({"mcpServers": {}, "servers": {}}),
            "both `mcpServers` and `servers`",
        ),
        (json!({"mcpServers": []}), "must be an object of servers"),
        (
            json!({"mcpServers": {"": {"command": "x"}}}),
            "name is empty",
        ),
        (
            json!({"mcpServers": {"a": {"command": "x", "disabled": "yes"}}}),
            "server `a`: `disabled` must be true or false",
        ),
    ] {
        let e = read(&input).unwrap_err().to_string();
        assert!(e.contains(message), "{input}: {e}");
    }
}

#[test]
fn entry_errors_name_the_server_and_the_member() {
    for (entry, message) in [
        (json!([]), "the entry must be an object"),
        (json!({}), "`command` is missing"),
        (json!({"command": 1}), "`command` must be a string"),
        (
            json!({"command": ""}),
            "`command` must be a non-empty string",
        ),
        (
            json!({"command": "x", "url": "y"}),
            "`url` cannot be given with `command`",
        ),
        (
            json!({"type": "sse", "command": "y"}),
            "`command` does not apply to a HTTP",
        ),
        (json!({"type": "ws", "url": "y"}), "`type` must be"),
        (json!({"type": 1, "url": "y"}), "`type` must be a string"),
        (
            json!({"type": "stdio", "url": "y"}),
            "`url` does not apply to a stdio",
        ),
        (
            json!({"type": "stdio"}),
            "`command` must be a non-empty string",
        ),
        (json!({"type": "http"}), "`url` must be a non-empty string"),
        (
            json!({"command": "x", "headers": {"a": "b"}}),
            "`headers` does not apply",
        ),
        (
            json!({"url": "http://x", "env": {"a": "b"}}),
            "`env` does not apply",
        ),
        (
            json!({"command": "x", "args": [1]}),
            "`args[0]` must be a string",
        ),
        (
            json!({"command": "x", "args": "a"}),
            "`args` must be an array",
        ),
        (
            json!({"command": "x", "env": {"K": 1}}),
            "`env.K` must be a string",
        ),
        (json!({"command": "x", "cwd": 1}), "`cwd` must be a string"),
        (
            json!({"url": "http://x", "headers": {"bad name": "v"}}),
            "`headers.bad name` is not a valid HTTP header name",
        ),
        (
            json!({"url": "http://x", "headers": {"a": "line\nbreak"}}),
            "`headers.a` is not a valid HTTP header value",
        ),
        (
            json!({"command": "x", "timeout": 0}),
            "`timeout` must be a whole number",
        ),
        (
            json!({"command": "x", "timeout": 1.5}),
            "`timeout` must be a whole number",
        ),
        (
            json!({"command": "x", "timeout": "30s"}),
            "`timeout` must be a whole number",
        ),
        (
            json!({"command": "x", "timeout": MAX_TIMEOUT_MS + 1}),
            "`timeout` must be",
        ),
        (
            json!({"command": "x", "protocolVersions": []}),
            "at least one",
        ),
        (
            json!({"command": "x", "protocolVersions": ["2026-07-28", "2024-01-01"]}),
            "`protocolVersions[1]` is not a known revision",
        ),
        (
            json!({"command": "x", "allow": ["a", ""]}),
            "`allow[1]` must not be empty",
        ),
        (
            json!({"command": "x", "deny": "a"}),
            "`deny` must be an array",
        ),
        (
            json!({"command": "x", "groups": [true]}),
            "`groups[0]` must be a string",
        ),
    ] {
        let e = error(&entry);
        assert!(e.contains("server `s`"), "{entry}: {e}");
        assert!(e.contains(message), "{entry}: {e}");
    }
    // The typed error carries the server and the member.
    match one(&json!({"command": "x", "env": {"K": 1}})) {
        Err(Error::InvalidField { server, field, .. }) => {
            assert_eq!((server.as_str(), field.as_str()), ("s", "env.K"));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn variables_are_substituted_once() {
    let config = one(&json!({
        "command": "${HOME}/bin/srv",
        "args": ["--home=${HOME}", "${MISSING:-fallback}", "${EMPTY:-was empty}", "[${EMPTY}]",
                 "$$HOME", "cost: $5", "${TRICKY}", "a$"],
        "env": {"TOKEN": "${MISSING:-}"},
        "cwd": "${HOME}"
    }))
    .unwrap();
    let stdio = config.stdio().unwrap();
    assert_eq!(stdio.command, "/home/ada/bin/srv");
    assert_eq!(
        stdio.args,
        [
            "--home=/home/ada",
            "fallback",
            "was empty",
            "[]",
            "$HOME",
            "cost: $5",
            // A value from the environment is not expanded again.
            "${HOME}$$",
            "a$"
        ]
    );
    assert_eq!(stdio.env, [("TOKEN".to_owned(), String::new())]);
    assert_eq!(stdio.cwd.as_deref(), Some(Path::new("/home/ada")));
    let http = one(&json!({"url": "https://${MISSING:-example.com}/mcp",
                          "headers": {"X-Home": "${HOME}"}}))
    .unwrap();
    let http = http.http().unwrap();
    assert_eq!(http.url, "https://example.com/mcp");
    assert_eq!(
        http.headers,
        [("X-Home".to_owned(), "/home/ada".to_owned())]
    );
    // Names are not expanded.
    let named = one(&json!({"command": "x", "allow": ["${HOME}"]})).unwrap();
    assert_eq!(named.allow, Some(vec!["${HOME}".to_owned()]));
}

#[test]
fn an_unset_variable_fails_closed() {
    match one(&json!({"command": "x", "args": ["a", "--token=${API_TOKEN}"]})) {
        Err(Error::UnsetVariable {
            server,
            field,
            variable,
        }) => {
            assert_eq!(
                (server.as_str(), field.as_str(), variable.as_str()),
                ("s", "args[1]", "API_TOKEN")
            );
        }
        other => panic!("{other:?}"),
    }
    let e = error(&json!({"url": "http://x", "headers": {"Authorization": "Bearer ${API_TOKEN}"}}));
    assert!(
        e.contains("API_TOKEN") && e.contains("headers.Authorization"),
        "{e}"
    );
    for (entry, message) in [
        (json!({"command": "${HOME"}), "without its closing"),
        (json!({"command": "${}"}), "neither"),
        (json!({"command": "${1X}"}), "neither"),
        (json!({"command": "${A B}"}), "neither"),
        (json!({"command": "${A-b}"}), "neither"),
    ] {
        let e = error(&entry);
        assert!(
            e.contains(message) && e.contains("`command`"),
            "{entry}: {e}"
        );
    }
    // A disabled entry is not read, so its variables need not be set.
    let servers = read(&json!({"mcpServers": {
        "off": {"command": "${API_TOKEN}", "disabled": true}
    }}))
    .unwrap();
    assert!(servers.is_empty());
}

#[test]
fn protocol_versions_choose_the_era() {
    let stdio = || ServerConfig::new(StdioConfig::new("x"));
    let choice = |config: ServerConfig| {
        format!(
            "{:?}",
            config.connector(mcp_client::Client::builder("t", "1"))
        )
    };
    let default = choice(stdio());
    assert!(default.contains("choice: Detect"), "{default}");
    let modern = choice(stdio().protocol_versions(["2026-07-28"]));
    assert!(modern.contains("choice: Modern"), "{modern}");
    let legacy = choice(stdio().protocol_versions(["2025-06-18", "2024-11-05"]));
    assert!(
        legacy.contains("choice: Legacy")
            && legacy.contains(r#"legacy_offer: ["2025-06-18", "2024-11-05"]"#),
        "{legacy}"
    );
    let both = choice(stdio().protocol_versions(["2026-07-28", "2025-03-26"]));
    assert!(
        both.contains("choice: Detect") && both.contains(r#"legacy_offer: ["2025-03-26"]"#),
        "{both}"
    );
    let timed = choice(stdio().timeout(Duration::from_millis(250)));
    assert!(timed.contains("probe_timeout: 250ms"), "{timed}");
}

#[test]
fn set_header_replaces_whatever_the_case() {
    let http = HttpConfig::new("http://x")
        .header("Authorization", "a")
        .header("X-Other", "b")
        .set_header("authorization", "c");
    assert_eq!(
        http.headers,
        [
            ("X-Other".to_owned(), "b".to_owned()),
            ("authorization".to_owned(), "c".to_owned())
        ]
    );
    assert!(http.to_client_config("s").is_ok());
    let bad = HttpConfig::new("http://x").header("a b", "c");
    assert!(matches!(
        bad.to_client_config("s"),
        Err(Error::InvalidField { field, .. }) if field == "headers.a b"
    ));
}

#[test]
fn naming_is_read_and_checked() {
    let config = HostConfig::from_value_with_env(
        &json!({"naming": {"prefix": "mcp", "separator": "__", "includeServer": true,
                           "maxLength": 48},
                "mcpServers": {"a": {"command": "x"}}}),
        &env,
    )
    .unwrap();
    let naming = config.naming.clone().unwrap();
    assert_eq!(naming.base_name("gh", "issue"), "mcp__gh__issue");
    assert_eq!(naming.max_len, 48);
    // One server alone keeps the file's naming.
    assert_eq!(config.only("a").unwrap().naming, config.naming);
    let none = HostConfig::from_value_with_env(&json!({"servers": {}}), &env).unwrap();
    assert_eq!(none.naming, None);
    for (naming, message) in [
        (json!([]), "`naming` must be an object"),
        (json!({"prefix": ""}), "`naming.prefix` must be 1 to 32"),
        (json!({"prefix": "9mcp"}), "`naming.prefix` must be"),
        (json!({"prefix": "m.cp"}), "`naming.prefix` must be"),
        (json!({"prefix": "x".repeat(33)}), "`naming.prefix` must be"),
        (json!({"prefix": 1}), "`naming.prefix` must be a string"),
        (
            json!({"separator": ""}),
            "`naming.separator` must be 1 to 4",
        ),
        (json!({"separator": "::"}), "`naming.separator` must be"),
        (json!({"separator": "_____"}), "`naming.separator` must be"),
        (
            json!({"includeServer": "no"}),
            "`naming.includeServer` must be true",
        ),
        (
            json!({"maxLength": 17}),
            "`naming.maxLength` must be from 18 to 64",
        ),
        (
            json!({"maxLength": 65}),
            "`naming.maxLength` must be from 18 to 64",
        ),
        (
            json!({"maxLength": "64"}),
            "`naming.maxLength` must be a whole number",
        ),
        (
            json!({"prefixe": "mcp"}),
            "`naming.prefixe` is not a member",
        ),
    ] {
        let e = read(&json!({"naming": naming, "mcpServers": {}}))
            .unwrap_err()
            .to_string();
        assert!(e.contains(message), "{naming}: {e}");
    }
}

#[test]
fn renames_are_read_and_checked_across_servers() {
    let config = one(&json!({"command": "x", "rename": {"create_issue": "new_issue"}})).unwrap();
    assert_eq!(
        config.rename,
        [("create_issue".to_owned(), "new_issue".to_owned())]
    );
    for (entry, message) in [
        (
            json!({"command": "x", "rename": ["a"]}),
            "`rename` must be an object",
        ),
        (
            json!({"command": "x", "rename": {"a": 1}}),
            "`rename.a` must be a string",
        ),
        (
            json!({"command": "x", "rename": {"a": ""}}),
            "`rename.a` must be 1 to 64",
        ),
        (
            json!({"command": "x", "rename": {"a": "b.c"}}),
            "`rename.a` must be 1 to 64",
        ),
        (
            json!({"command": "x", "rename": {"a": "1b"}}),
            "`rename.a` must be 1 to 64",
        ),
        (
            json!({"command": "x", "rename": {"a": "x".repeat(65)}}),
            "`rename.a` must be 1 to 64",
        ),
        (json!({"command": "x", "rename": {"": "b"}}), "empty name"),
        (
            json!({"command": "x", "rename": {"a": "same", "b": "same"}}),
            "`rename.b` gives `same`, which `rename.a` already gives",
        ),
    ] {
        let e = error(&entry);
        assert!(e.contains(message), "{entry}: {e}");
    }
    // Across servers, and within the naming's length limit.
    let e = read(&json!({"mcpServers": {
        "a": {"command": "x", "rename": {"t": "shared"}},
        "b": {"command": "x", "rename": {"u": "shared"}}
    }}))
    .unwrap_err()
    .to_string();
    assert!(e.contains("the name `shared` is given to"), "{e}");
    let e = read(&json!({"naming": {"maxLength": 20}, "mcpServers": {
        "a": {"command": "x", "rename": {"t": "a_name_of_twenty_one_"}}
    }}))
    .unwrap_err()
    .to_string();
    assert!(e.contains("`rename.t` must be 1 to 20"), "{e}");
}

#[test]
fn approval_is_read_and_checked() {
    let config = one(&json!({"command": "x",
        "approval": {"tools": ["delete_*", "push"], "destructive": true}}))
    .unwrap();
    assert_eq!(
        config.approval,
        Approval::new()
            .tools(["delete_*", "push"])
            .destructive(true)
    );
    assert!(one(&json!({"command": "x"})).unwrap().approval.is_empty());
    for (entry, message) in [
        (
            json!({"command": "x", "approval": true}),
            "`approval` must be an object",
        ),
        (
            json!({"command": "x", "approval": {"tools": "rm"}}),
            "`approval.tools` must be an array",
        ),
        (
            json!({"command": "x", "approval": {"tools": [""]}}),
            "`approval.tools[0]` must not be empty",
        ),
        (
            json!({"command": "x", "approval": {"destructive": "yes"}}),
            "`approval.destructive` must be true or false",
        ),
        (
            json!({"command": "x", "approval": {"tool": ["rm"]}}),
            "`approval.tool` is not a member of `approval`",
        ),
    ] {
        let e = error(&entry);
        assert!(e.contains(message), "{entry}: {e}");
    }
}

#[test]
fn oauth_is_read_and_checked() {
    let env = |name: &str| (name == "SECRET").then(|| "s3cret".to_owned());
    let read_oauth = |oauth: Value| {
        ServerConfig::from_value_with_env(
            "s",
            &json!({"url": "https://x/mcp", "oauth": oauth}),
            &env,
        )
    };
    let credentials = read_oauth(json!({"grant": "client_credentials", "clientId": "agent",
        "clientSecret": "${SECRET}", "issuer": "https://auth.example", "allowPrivate": true}))
    .unwrap();
    assert_eq!(
        credentials.http().unwrap().oauth,
        Some(
            OAuth::client_credentials("agent", "s3cret")
                .issuer("https://auth.example")
                .allow_private(true)
        )
    );
    // The secret is kept out of debugging output.
    assert!(!format!("{credentials:?}").contains("s3cret"));
    let stored = read_oauth(json!({"grant": "stored", "store": "/tmp/creds.json"})).unwrap();
    assert_eq!(
        stored.http().unwrap().oauth,
        Some(OAuth::stored().store("/tmp/creds.json"))
    );
    for (oauth, message) in [
        (json!("stored"), "`oauth` must be an object"),
        (
            json!({}),
            "`oauth.grant` must be `client_credentials` or `stored`",
        ),
        (json!({"grant": "password"}), "`oauth.grant` must be"),
        (
            json!({"grant": "client_credentials", "clientSecret": "x"}),
            "`oauth.clientId` must be a non-empty string",
        ),
        (
            json!({"grant": "client_credentials", "clientId": "a"}),
            "`oauth.clientSecret` must be a non-empty string",
        ),
        (
            json!({"grant": "client_credentials", "clientId": "a", "clientSecret": 1}),
            "`oauth.clientSecret` must be a string",
        ),
        (
            json!({"grant": "client_credentials", "clientId": "a", "clientSecret": "${NOPE}"}),
            "`oauth.clientSecret` uses the environment variable `NOPE`",
        ),
        (
            json!({"grant": "stored", "clientId": "a"}),
            "`oauth.clientId` is not a member of `oauth` with this grant",
        ),
        (
            json!({"grant": "client_credentials", "clientId": "a", "clientSecret": "b",
                   "scopes": ["mcp"]}),
            "`oauth.scopes` is not a member",
        ),
        (
            json!({"grant": "stored", "allowPrivate": "yes"}),
            "`oauth.allowPrivate` must be true or false",
        ),
    ] {
        let e = read_oauth(oauth.clone()).unwrap_err().to_string();
        assert!(
            e.contains("server `s`") && e.contains(message),
            "{oauth}: {e}"
        );
    }
    // Not on a stdio server, and not beside a configured `Authorization`.
    let e = error(&json!({"command": "x", "oauth": {"grant": "stored"}}));
    assert!(
        e.contains("`oauth` does not apply to a stdio server"),
        "{e}"
    );
    let e = error(
        &json!({"url": "https://x", "headers": {"authorization": "Bearer t"},
                          "oauth": {"grant": "stored"}}),
    );
    assert!(
        e.contains("`headers.authorization` cannot be given with `oauth`"),
        "{e}"
    );
}
