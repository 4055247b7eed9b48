//! The host's settings from a configuration file reach a connected host: `naming` (a
//! prefix such as AgentScope's `mcp__server__tool`), per-tool `rename`s and `approval`
//! rules, each seen in the catalog and in the calls it routes.

use std::time::Duration;

use mcp_host::{Host, HostConfig, ToolCall};
use mcp_server::{Server, ToolDef};
use mcp_transport_http::{HttpServer, HttpServerConfig, RunningServer};
use mcp_types::{CallToolResult, JsonObject, ToolAnnotations};
use serde_json::{Value, json};

/// A tool that answers with its own name; `read_only` annotates it so.
fn tool(name: &'static str, read_only: bool) -> ToolDef {
    let def = ToolDef::new(name, json!({"type": "object"}), move |_, _| async move {
        Ok(CallToolResult::text(format!("{name} ran")))
    });
    if read_only {
        let mut hints = ToolAnnotations::default();
        hints.read_only_hint = Some(true);
        def.annotations(hints)
    } else {
        def
    }
}

/// A modern HTTP server with these tools.
async fn serve(tools: &[(&'static str, bool)]) -> RunningServer {
    let mut server = Server::builder("cfg", "1");
    for (name, read_only) in tools {
        server = server.tool(tool(name, *read_only));
    }
    HttpServer::bind(
        "127.0.0.1:0".parse().unwrap(),
        server.build().unwrap(),
        HttpServerConfig::default(),
    )
    .await
    .unwrap()
}

/// A host connected as the configuration `config` says.
async fn host(config: &Value) -> Host {
    let config = HostConfig::from_json(&config.to_string()).unwrap();
    let host = Host::builder().config(config).connect().await.unwrap();
    assert!(host.failures().is_empty(), "{:?}", host.failures());
    host
}

fn names(host: &Host) -> Vec<String> {
    host.catalog()
        .entries()
        .iter()
        .map(|e| e.name.clone())
        .collect()
}

/// The text of the answer to a call of the model-visible `name`.
async fn call(host: &Host, name: &str) -> String {
    let outcome = host
        .call(
            &host.catalog(),
            vec![ToolCall::new("1", name, JsonObject::new())],
        )
        .await;
    outcome[0].to_openai_chat()["content"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn a_naming_prefix_names_every_tool_and_maps_back() {
    let running = serve(&[("read_file", true), ("write", false)]).await;
    let url = running.url();
    let host = host(&json!({
        "naming": {"prefix": "mcp", "separator": "__"},
        "mcpServers": {"web": {"url": url}, "web2": {"url": url}}
    }))
    .await;
    assert_eq!(
        names(&host),
        [
            "mcp__web__read_file",
            "mcp__web__write",
            "mcp__web2__read_file",
            "mcp__web2__write"
        ]
    );
    let catalog = host.catalog();
    let entry = catalog.resolve("mcp__web2__write").unwrap();
    assert_eq!(
        (entry.server.as_str(), entry.tool.name.as_str()),
        ("web2", "write")
    );
    assert_eq!(call(&host, "mcp__web__read_file").await, "read_file ran");
    host.shutdown().await;

    // Without the server in the name, the two servers' tools collide and get suffixes
    // that still map back to one tool each.
    let host = self::host(&json!({
        "naming": {"prefix": "mcp", "separator": "_", "includeServer": false},
        "mcpServers": {"web": {"url": url}, "web2": {"url": url}}
    }))
    .await;
    let all = names(&host);
    assert_eq!(all.len(), 4);
    for name in &all {
        assert!(
            name.starts_with("mcp_read_file_") || name.starts_with("mcp_write_"),
            "{name}"
        );
        assert!(call(&host, name).await.ends_with(" ran"));
    }
    host.shutdown().await;
    running.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn renamed_tools_are_called_by_their_new_names() {
    let running = serve(&[("read_file", true), ("write", false)]).await;
    let url = running.url();
    let host = host(&json!({
        "naming": {"prefix": "mcp"},
        "mcpServers": {
            // `web2`'s `write` is named as `web`'s `read_file` would be: that one is
            // suffixed, the explicit name wins.
            "web": {"url": url, "rename": {"write": "save"}},
            "web2": {"url": url, "rename": {"write": "mcp__web__read_file"}}
        }
    }))
    .await;
    let all = names(&host);
    assert_eq!(all[1], "save");
    assert!(all[0].starts_with("mcp__web__read_file_"), "{all:?}");
    assert_eq!(all[2..], ["mcp__web2__read_file", "mcp__web__read_file"]);
    let catalog = host.catalog();
    let entry = catalog.resolve("mcp__web__read_file").unwrap();
    assert_eq!(
        (entry.server.as_str(), entry.tool.name.as_str()),
        ("web2", "write")
    );
    assert!(catalog.resolve("mcp__web__write").is_none());
    // Each name runs its own tool on its own server.
    assert_eq!(call(&host, "save").await, "write ran");
    assert_eq!(call(&host, "mcp__web__read_file").await, "write ran");
    assert_eq!(call(&host, &all[0]).await, "read_file ran");
    host.shutdown().await;
    running.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn a_name_given_twice_or_invalid_is_refused_when_the_host_connects() {
    use mcp_host::{Error, HttpConfig, ServerConfig};
    let server =
        |name: &str| ServerConfig::new(HttpConfig::new("http://127.0.0.1:9/mcp")).rename("t", name);
    let twice = Host::builder()
        .server("a", server("same"))
        .server("b", server("same"))
        .connect()
        .await;
    assert!(
        matches!(&twice, Err(Error::Config(m)) if m.contains("`same`")),
        "{twice:?}"
    );
    let invalid = Host::builder()
        .server("a", server("not valid"))
        .connect()
        .await;
    assert!(
        matches!(&invalid, Err(Error::InvalidField { server, field, .. }) if server == "a" && field == "rename.t"),
        "{invalid:?}"
    );
    // In a file, the parser refuses them already.
    let e = HostConfig::from_json(
        &json!({"mcpServers": {
            "a": {"url": "http://x/mcp", "rename": {"t": "same"}},
            "b": {"url": "http://x/mcp", "rename": {"u": "same"}}
        }})
        .to_string(),
    )
    .unwrap_err();
    assert!(matches!(e, Error::Config(_)), "{e}");
}

/// Approves only the calls of tools named in its list, and records what it was asked.
#[derive(Clone, Default)]
struct Approve(
    std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    &'static [&'static str],
);

impl mcp_host::Approver for Approve {
    fn approve(&self, call: mcp_host::CallInfo) -> mcp_host::BoxFuture<'static, bool> {
        self.0.lock().unwrap().push(call.tool.clone());
        let yes = self.1.contains(&call.tool.as_str());
        Box::pin(async move { yes })
    }
}

#[tokio::test]
async fn approval_rules_of_the_config_guard_their_tools() {
    let running = serve(&[("read_file", true), ("write", false), ("delete", false)]).await;
    let url = running.url();
    let config = HostConfig::from_json(
        &json!({"mcpServers": {
            "named": {"url": url, "approval": {"tools": ["del*"]}},
            "wary": {"url": url, "approval": {"destructive": true},
                     "rename": {"write": "save"}}
        }})
        .to_string(),
    )
    .unwrap();
    let approver = Approve(std::sync::Arc::default(), &["write"]);
    let host = Host::builder()
        .config(config)
        .approver(approver.clone())
        .connect()
        .await
        .unwrap();
    let needs: Vec<(String, bool)> = host
        .catalog()
        .entries()
        .iter()
        .map(|e| (e.name.clone(), e.requires_approval))
        .collect();
    let expected = [
        ("named__read_file", false),
        ("named__write", false),
        ("named__delete", true),
        ("wary__read_file", false),
        ("save", true),
        ("wary__delete", true),
    ];
    assert_eq!(needs, expected.map(|(n, b)| (n.to_owned(), b)),);
    // Approved: runs; refused: an error result, the server never reached.
    assert_eq!(call(&host, "save").await, "write ran");
    assert_eq!(call(&host, "named__write").await, "write ran");
    let refused = call(&host, "named__delete").await;
    assert!(refused.contains("was not approved"), "{refused}");
    assert_eq!(*approver.0.lock().unwrap(), ["write", "delete"]);
    host.shutdown().await;

    // Without an approver, a call that needs approval is refused.
    let config = HostConfig::from_json(
        &json!({"mcpServers": {"wary": {"url": url, "approval": {"tools": ["*"]}}}}).to_string(),
    )
    .unwrap();
    let host = Host::builder().config(config).connect().await.unwrap();
    let refused = call(&host, "wary__read_file").await;
    assert!(refused.contains("was not approved"), "{refused}");
    host.shutdown().await;
    running.shutdown(Duration::from_secs(1)).await;
}
