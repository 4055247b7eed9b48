//! The gateway in process: upstreams served over loopback HTTP, the gateway's server
//! served the same way, and clients of both eras in front of it.

#![cfg(feature = "gateway")]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcp_client::{CallOptions, Client, ListenEvent};
use mcp_host::{
    AuditLog, Gateway, HostConfig, HttpConfig, ServerConfig, require_approval_if_destructive,
};
use mcp_legacy::client::{Connector, EraChoice};
use mcp_server::tasks::{TaskSupport, Tasks};
use mcp_server::{Context, PromptDef, ResourceDef, ResourceTemplateDef, Server, ToolDef};
use mcp_transport_http::{HttpClientConfig, HttpServerConfig, RunningServer};
use mcp_types::{
    CallToolResult, ElicitRequestFormParams, ElicitRequestParams, EmbeddedResourceResource,
    SubscriptionFilter, TextResourceContents,
};
use serde_json::{Value, json};

/// Serves `server` over Streamable HTTP (both eras) on a loopback port.
async fn serve(server: Server) -> RunningServer {
    mcp_legacy::http::DualEraHttp::bind(
        "127.0.0.1:0".parse().unwrap(),
        server,
        HttpServerConfig::default(),
        mcp_legacy::http::LegacyHttpConfig::default(),
    )
    .await
    .unwrap()
}

fn config(upstreams: &[(&str, &str)]) -> HostConfig {
    let servers: serde_json::Map<String, Value> = upstreams
        .iter()
        .map(|(name, url)| ((*name).to_owned(), json!({"type": "http", "url": url})))
        .collect();
    HostConfig::from_json(&json!({ "mcpServers": servers }).to_string()).unwrap()
}

fn text_resource(uri: String, text: &str) -> Vec<EmbeddedResourceResource> {
    vec![EmbeddedResourceResource::TextResourceContents(
        TextResourceContents::new(text, uri),
    )]
}

/// A client of the gateway's server over HTTP, in `era`, that answers elicitation forms
/// with `answer`.
async fn client(gateway: &RunningServer, era: EraChoice, answer: Value) -> Client {
    let builder = Client::builder("gateway-test", "1").on_elicit(move |_| {
        let answer = answer.clone();
        async move { Ok(serde_json::from_value(answer).unwrap()) }
    });
    Connector::new(builder)
        .era(era)
        .connect_http(gateway.url(), HttpClientConfig::default())
        .await
        .unwrap()
        .client
}

fn text(result: &CallToolResult) -> String {
    serde_json::to_value(result).unwrap()["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_that_is_down_is_named_and_the_others_are_served() {
    let up = serve(
        Server::builder("a", "1")
            .tool(ToolDef::new(
                "echo",
                json!({"type": "object"}),
                |_, _| async { Ok(CallToolResult::text("echoed")) },
            ))
            .build()
            .unwrap(),
    )
    .await;
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/mcp", listener.local_addr().unwrap())
    };
    let gateway = Gateway::builder()
        .config(config(&[("a", up.url()), ("gone", &closed)]))
        .connect_timeout(Duration::from_secs(5))
        .connect()
        .await
        .unwrap();
    let status = gateway.status();
    assert_eq!(status[0], ("a".to_owned(), None));
    assert_eq!(status[1].0, "gone");
    assert!(status[1].1.is_some(), "{status:?}");
    let served = serve(gateway.server().clone()).await;
    for era in [EraChoice::Detect, EraChoice::Legacy] {
        let client = client(&served, era, json!({"action": "decline"})).await;
        let found = client.discover().await.unwrap();
        let instructions = found.instructions.unwrap_or_default();
        assert!(
            instructions.contains("The server gone is unavailable"),
            "{instructions}"
        );
        let tools: Vec<String> = client
            .list_tools_all()
            .await
            .unwrap()
            .into_iter()
            .map(|t| t.name)
            .collect();
        assert_eq!(tools, ["a__echo"]);
        let result = client.call_tool("a__echo", ()).await.unwrap();
        assert_eq!(text(&result), "echoed");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_that_needs_approval_is_put_to_the_downstream_user_first() {
    let runs = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&runs);
    let up = serve(
        Server::builder("files", "1")
            .tool(
                // No annotations: destructive, per the schema's defaults.
                ToolDef::new("rm", json!({"type": "object"}), move |_, _| {
                    counted.fetch_add(1, Ordering::SeqCst);
                    async { Ok(CallToolResult::text("removed")) }
                }),
            )
            .build()
            .unwrap(),
    )
    .await;
    let audit = AuditLog::new();
    let gateway = Gateway::builder()
        .config(config(&[("files", up.url())]))
        .policy(require_approval_if_destructive)
        .middleware(audit.clone())
        .connect()
        .await
        .unwrap();
    let served = serve(gateway.server().clone()).await;
    for era in [EraChoice::Detect, EraChoice::Legacy] {
        let before = runs.load(Ordering::SeqCst);
        let refusing = client(&served, era.clone(), json!({"action": "decline"})).await;
        let refused = refusing.call_tool("files__rm", ()).await.unwrap();
        assert_eq!(refused.is_error, Some(true), "{refused:?}");
        assert!(text(&refused).contains("not approved"), "{refused:?}");
        assert_eq!(runs.load(Ordering::SeqCst), before, "a refused call ran");

        let approving = client(
            &served,
            era,
            json!({"action": "accept", "content": {"approve": true}}),
        )
        .await;
        let done = approving.call_tool("files__rm", ()).await.unwrap();
        assert_eq!(text(&done), "removed");
        assert_eq!(runs.load(Ordering::SeqCst), before + 1);
    }
    // Only the calls that went upstream are audited.
    let entries = audit.entries();
    assert_eq!(entries.len(), 2, "{entries:?}");
    assert!(
        entries
            .iter()
            .all(|e| e.call.server == "files" && e.call.tool == "rm")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompts_resources_and_templates_are_aggregated_with_uris_mapped_both_ways() {
    let a = serve(
        Server::builder("a", "1")
            .prompt(PromptDef::new("hello", |_, _| async {
                Ok(mcp_types::GetPromptResult::new(vec![
                    mcp_types::PromptMessage::new(
                        mcp_types::ContentBlock::text("hello from a"),
                        mcp_types::Role::User,
                    ),
                ]))
            }))
            .resource(ResourceDef::new("mem://x", "x", |uri, _| async move {
                Ok(text_resource(uri, "x of a"))
            }))
            .build()
            .unwrap(),
    )
    .await;
    let b = serve(
        Server::builder("b", "1")
            .resource(ResourceDef::new("mem://x", "x", |uri, _| async move {
                Ok(text_resource(uri, "x of b"))
            }))
            .resource_template(
                ResourceTemplateDef::new("mem://t/{id}", "t", |uri, values, _| async move {
                    let id = values.get("id").cloned().unwrap_or_default();
                    Ok(text_resource(uri, &format!("t {id} of b")))
                })
                .unwrap(),
            )
            .build()
            .unwrap(),
    )
    .await;
    let gateway = Gateway::builder()
        .config(config(&[("a", a.url()), ("b", b.url())]))
        .connect()
        .await
        .unwrap();
    let served = serve(gateway.server().clone()).await;
    for era in [EraChoice::Detect, EraChoice::Legacy] {
        let client = client(&served, era, json!({"action": "decline"})).await;
        let prompts: Vec<String> = client
            .list_prompts_all()
            .await
            .unwrap()
            .into_iter()
            .map(|p| p.name)
            .collect();
        assert_eq!(prompts, ["a__hello"]);
        let prompt = client.get_prompt("a__hello", ()).await.unwrap();
        assert!(
            serde_json::to_string(&prompt)
                .unwrap()
                .contains("hello from a")
        );

        let uris: Vec<String> = client
            .list_resources_all()
            .await
            .unwrap()
            .into_iter()
            .map(|r| r.uri)
            .collect();
        assert_eq!(uris, ["mem://x", "mcp-host://b/mem://x"]);
        for (uri, expected) in [
            ("mem://x", "x of a"),
            ("mcp-host://b/mem://x", "x of b"),
            ("mem://t/7", "t 7 of b"),
        ] {
            let read = client.read_resource(uri).await.unwrap();
            let content = serde_json::to_value(&read.contents[0]).unwrap();
            assert_eq!(content["text"], expected, "{uri}");
            // The contents name the URI the client asked for.
            assert_eq!(content["uri"], uri);
        }
        let templates: Vec<String> = client
            .list_resource_templates_all()
            .await
            .unwrap()
            .into_iter()
            .map(|t| t.uri_template)
            .collect();
        assert_eq!(templates, ["mem://t/{id}"]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_changes_progress_and_upstream_tasks_pass_through() {
    let upstream = Server::builder("live", "1")
        .tool(
            ToolDef::new("count", json!({"type": "object"}), |_, cx: Context| async move {
                for step in 1..=3 {
                    cx.progress(f64::from(step), Some(3.0), Some("counting"))
                        .await;
                }
                Ok(CallToolResult::text("counted"))
            }),
        )
        .tool(
            // A task whose run asks the user: the gateway follows the task and asks
            // downstream.
            ToolDef::new("ask", json!({"type": "object"}), |_, cx: Context| async move {
                let form: ElicitRequestFormParams = serde_json::from_value(json!({
                    "message": "Name?",
                    "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}
                }))?;
                let answer = cx.elicit("name", ElicitRequestParams::ElicitRequestForm(form))?;
                let name = serde_json::to_value(&answer.content)?["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                Ok(CallToolResult::text(format!("Hello, {name}!")))
            })
            .task_support(TaskSupport::Required),
        )
        .tasks(Tasks::in_memory().poll_interval(Duration::from_millis(10)))
        .build()
        .unwrap();
    let up = serve(upstream.clone()).await;
    let gateway = Gateway::builder()
        .config(config(&[("live", up.url())]))
        .connect()
        .await
        .unwrap();
    let served = serve(gateway.server().clone()).await;
    for (round, era) in [EraChoice::Detect, EraChoice::Legacy]
        .into_iter()
        .enumerate()
    {
        let client = client(
            &served,
            era,
            json!({"action": "accept", "content": {"name": "Ada"}}),
        )
        .await;
        // Progress flows down.
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = Arc::clone(&seen);
        let options = CallOptions::default().progress(move |p| {
            sink.lock()
                .unwrap()
                .push(p.progress.as_f64().unwrap_or_default());
        });
        let counted = client
            .call_tool_with("live__count", (), &options)
            .await
            .unwrap();
        assert_eq!(text(&counted), "counted");
        assert_eq!(*seen.lock().unwrap(), [1.0, 2.0, 3.0]);

        // A task upstream, with a question on the way: one call downstream.
        let asked = client.call_tool("live__ask", ()).await.unwrap();
        assert_eq!(text(&asked), "Hello, Ada!", "{asked:?}");

        // A tool added upstream is announced downstream and served.
        let mut filter = SubscriptionFilter::new();
        filter.tools_list_changed = Some(true);
        let mut listen = client.listen(filter).await.unwrap();
        assert!(matches!(
            listen.next().await,
            Some(ListenEvent::Acknowledged(_))
        ));
        let name = format!("added{round}");
        upstream
            .add_tool(ToolDef::new(
                name.clone(),
                json!({"type": "object"}),
                |_, _| async { Ok(CallToolResult::text("new")) },
            ))
            .unwrap();
        let event = tokio::time::timeout(Duration::from_secs(10), listen.next())
            .await
            .expect("no list change downstream within 10 s");
        assert_eq!(event, Some(ListenEvent::ToolsListChanged));
        // The gateway republishes before it announces: the new tool is there.
        let downstream = format!("live__{name}");
        let mut found = false;
        for _ in 0..50 {
            let tools = client.list_tools_all().await.unwrap();
            if tools.iter().any(|t| t.name == downstream) {
                found = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(found, "{downstream} never listed");
        let result = client.call_tool(&downstream, ()).await.unwrap();
        assert_eq!(text(&result), "new");
    }
}

/// A modern upstream that lists a tool and answers its calls with garbage.
async fn junk_upstream() -> (tokio::task::JoinHandle<()>, String) {
    use http_body_util::BodyExt as _;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let task = mcp_test_support::http::serve_http1(listener, (), |request, ()| async move {
        let body = request.into_body().collect().await.unwrap().to_bytes();
        let message: Value = serde_json::from_slice(&body).unwrap_or_default();
        let id = message["id"].clone();
        let result = match message["method"].as_str() {
            Some("server/discover") => json!({
                "resultType": "complete",
                "supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {}},
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "junk", "version": "1"}}
            }),
            Some("tools/list") => json!({
                "resultType": "complete",
                "tools": [{"name": "broken", "inputSchema": {"type": "object"}}]
            }),
            // Content that is no list of blocks.
            Some("tools/call") => json!({"resultType": "complete", "content": "garbage"}),
            _ => {
                let error = json!({"jsonrpc": "2.0", "id": id,
                    "error": {"code": -32601, "message": "no such method"}});
                return http::Response::builder()
                    .header("content-type", "application/json")
                    .body(http_body_util::Full::new(error.to_string().into()))
                    .unwrap();
            }
        };
        let reply = json!({"jsonrpc": "2.0", "id": id, "result": result});
        http::Response::builder()
            .header("content-type", "application/json")
            .body(http_body_util::Full::new(reply.to_string().into()))
            .unwrap()
    });
    (task, url)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_that_answers_with_garbage_fails_only_that_call() {
    let (_junk, junk_url) = junk_upstream().await;
    let fine = serve(
        Server::builder("fine", "1")
            .tool(ToolDef::new(
                "ok",
                json!({"type": "object"}),
                |_, _| async { Ok(CallToolResult::text("fine")) },
            ))
            .build()
            .unwrap(),
    )
    .await;
    let gateway = Gateway::builder()
        .config(config(&[("junk", &junk_url), ("fine", fine.url())]))
        .connect()
        .await
        .unwrap();
    let status = gateway.status();
    assert!(status.iter().all(|(_, down)| down.is_none()), "{status:?}");
    let served = serve(gateway.server().clone()).await;
    for era in [EraChoice::Detect, EraChoice::Legacy] {
        let client = client(&served, era, json!({"action": "decline"})).await;
        let broken = client.call_tool("junk__broken", ()).await.unwrap();
        assert_eq!(broken.is_error, Some(true), "{broken:?}");
        assert!(text(&broken).starts_with("junk: "), "{broken:?}");
        // The session, the gateway and the other upstream go on.
        let ok = client.call_tool("fine__ok", ()).await.unwrap();
        assert_eq!(text(&ok), "fine");
        let again = client.call_tool("junk__broken", ()).await.unwrap();
        assert_eq!(again.is_error, Some(true));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sampling_and_roots_reach_the_downstream_client_and_cancellation_reaches_the_upstream() {
    let cancelled = Arc::new(tokio::sync::Notify::new());
    let seen = Arc::clone(&cancelled);
    let upstream = Server::builder("asker", "1")
        .tool(ToolDef::new(
            "summarize",
            json!({"type": "object"}),
            |_, cx: Context| async move {
                let params: mcp_types::CreateMessageRequestParams =
                    serde_json::from_value(json!({
                        "messages": [{"role": "user", "content": {"type": "text", "text": "Sum up"}}],
                        "maxTokens": 10
                    }))?;
                let sampled = cx.sample("summary", params)?;
                let roots = cx.roots("roots")?;
                Ok(CallToolResult::text(format!(
                    "{} in {}",
                    serde_json::to_value(&sampled.content)?["text"],
                    roots.roots[0].uri
                )))
            },
        ))
        .tool(ToolDef::new(
            "wait",
            json!({"type": "object"}),
            move |_, cx: Context| {
                // Cancelled either way: its token fires, or its future is dropped.
                let guard = Notified(Arc::clone(&seen));
                async move {
                    cx.cancellation().cancelled().await;
                    drop(guard);
                    Ok(CallToolResult::text("stopped"))
                }
            },
        ))
        .build()
        .unwrap();
    let up = serve(upstream).await;
    let gateway = Gateway::builder()
        .config(config(&[("asker", up.url())]))
        .connect()
        .await
        .unwrap();
    let served = serve(gateway.server().clone()).await;
    for era in [EraChoice::Detect, EraChoice::Legacy] {
        let builder = Client::builder("gateway-test", "1")
            .on_sample(|_| async {
                Ok(serde_json::from_value(json!({
                    "role": "assistant",
                    "content": {"type": "text", "text": "short"},
                    "model": "test"
                }))
                .unwrap())
            })
            .on_roots(|| async {
                Ok(serde_json::from_value(json!({"roots": [{"uri": "file:///work"}]})).unwrap())
            });
        let client = Connector::new(builder)
            .era(era)
            .connect_http(served.url(), HttpClientConfig::default())
            .await
            .unwrap()
            .client;
        let result = client.call_tool("asker__summarize", ()).await.unwrap();
        assert_eq!(text(&result), "\"short\" in file:///work", "{result:?}");

        // A call the downstream client gives up on is cancelled upstream.
        let options = CallOptions::default().timeout(Duration::from_millis(300));
        let gave_up = client.call_tool_with("asker__wait", (), &options).await;
        assert!(gave_up.is_err(), "{gave_up:?}");
        tokio::time::timeout(Duration::from_secs(10), cancelled.notified())
            .await
            .expect("the upstream call was not cancelled");
    }
}

/// Notifies when dropped.
struct Notified(Arc<tokio::sync::Notify>);

impl Drop for Notified {
    fn drop(&mut self) {
        self.0.notify_one();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_configs_naming_renames_and_approval_rules_shape_what_the_gateway_serves() {
    let runs = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&runs);
    let up = serve(
        Server::builder("files", "1")
            .tool(ToolDef::new(
                "echo",
                json!({"type": "object"}),
                |_, _| async { Ok(CallToolResult::text("echoed")) },
            ))
            .tool(
                ToolDef::new("move", json!({"type": "object"}), move |_, _| {
                    counted.fetch_add(1, Ordering::SeqCst);
                    async { Ok(CallToolResult::text("moved")) }
                })
                .annotations(serde_json::from_value(json!({"readOnlyHint": true})).unwrap()),
            )
            .build()
            .unwrap(),
    )
    .await;
    let config = HostConfig::from_json(
        &json!({
            "naming": {"prefix": "mcp"},
            "mcpServers": {"files": {
                "type": "http",
                "url": up.url(),
                "rename": {"echo": "say"},
                // Approval by name, whatever the tool's hints say.
                "approval": {"tools": ["move"]}
            }}
        })
        .to_string(),
    )
    .unwrap();
    let gateway = Gateway::builder().config(config).connect().await.unwrap();
    let served = serve(gateway.server().clone()).await;
    let client = client(&served, EraChoice::Detect, json!({"action": "decline"})).await;
    let mut tools: Vec<String> = client
        .list_tools_all()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    tools.sort();
    assert_eq!(tools, ["mcp__files__move", "say"]);
    assert_eq!(text(&client.call_tool("say", ()).await.unwrap()), "echoed");
    let refused = client.call_tool("mcp__files__move", ()).await.unwrap();
    assert!(text(&refused).contains("not approved"), "{refused:?}");
    assert_eq!(runs.load(Ordering::SeqCst), 0);

    // Two upstreams renaming a tool to one name: refused when the gateway starts (the
    // config's parser refuses it in a file; here the configurations come from code).
    let refused = Gateway::builder()
        .upstream(
            "a",
            ServerConfig::new(HttpConfig::new(up.url())).rename("echo", "same"),
        )
        .upstream(
            "b",
            ServerConfig::new(HttpConfig::new(up.url())).rename("move", "same"),
        )
        .connect()
        .await;
    assert!(refused.is_err(), "{refused:?}");
}

/// An introspection endpoint (RFC 7662) that knows one token, `good`, for `resource`.
async fn introspection(resource: String) -> (tokio::task::JoinHandle<()>, String) {
    use http_body_util::BodyExt as _;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/introspect", listener.local_addr().unwrap());
    let task = mcp_test_support::http::serve_http1(
        listener,
        Arc::new(resource),
        |request, resource| async move {
            let body = request.into_body().collect().await.unwrap().to_bytes();
            let form = String::from_utf8_lossy(&body).into_owned();
            let exp = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_secs()
                + 600;
            let answer = if form.contains("token=good") {
                json!({"active": true, "aud": *resource, "iss": "https://auth.example.com",
                       "sub": "ada", "scope": "mcp", "exp": exp})
            } else {
                json!({"active": false})
            };
            http::Response::builder()
                .header("content-type", "application/json")
                .body(http_body_util::Full::new(answer.to_string().into()))
                .unwrap()
        },
    );
    (task, url)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_auth_section_protects_the_http_endpoint() {
    let up = serve(
        Server::builder("a", "1")
            .tool(ToolDef::new(
                "echo",
                json!({"type": "object"}),
                |_, _| async { Ok(CallToolResult::text("echoed")) },
            ))
            .build()
            .unwrap(),
    )
    .await;
    let port = mcp_test_support::free_port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let (_introspection, introspect_url) = introspection(resource.clone()).await;
    let config = HostConfig::from_value_with_env(
        &json!({
            "mcpServers": {"a": {"type": "http", "url": up.url()}},
            "gateway": {"auth": {
                "resource": resource,
                "issuer": "https://auth.example.com",
                "introspection": {"url": introspect_url, "clientId": "gateway",
                                  "clientSecret": "${GATEWAY_SECRET}"},
                "scopes": ["mcp"]
            }}
        }),
        &|name| (name == "GATEWAY_SECRET").then(|| "s3cret".to_owned()),
    )
    .unwrap();
    let gateway = Gateway::builder().config(config).connect().await.unwrap();
    let served = gateway
        .bind_http(
            format!("127.0.0.1:{port}").parse().unwrap(),
            HttpServerConfig::default(),
        )
        .await
        .unwrap();
    let bearer = |token: &str| {
        HttpClientConfig::default().header(
            http::header::AUTHORIZATION,
            http::HeaderValue::from_str(&format!("Bearer {token}")).unwrap(),
        )
    };
    for era in [EraChoice::Detect, EraChoice::Legacy] {
        // Without a token, or with one the authorization server does not know: refused.
        for config in [HttpClientConfig::default(), bearer("forged")] {
            let refused = Connector::new(Client::builder("t", "1"))
                .era(era.clone())
                .connect_http(served.url(), config)
                .await;
            assert!(refused.is_err(), "connected without a valid token");
        }
        let client = Connector::new(Client::builder("t", "1"))
            .era(era)
            .connect_http(served.url(), bearer("good"))
            .await
            .unwrap()
            .client;
        let result = client.call_tool("a__echo", ()).await.unwrap();
        assert_eq!(text(&result), "echoed");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2024_11_05_client_reaches_the_gateway_over_http_and_sse() {
    let up = serve(
        Server::builder("a", "1")
            .tool(ToolDef::new(
                "echo",
                json!({"type": "object"}),
                |_, _| async { Ok(CallToolResult::text("echoed")) },
            ))
            .build()
            .unwrap(),
    )
    .await;
    let gateway = Gateway::builder()
        .config(config(&[("a", up.url())]))
        .connect()
        .await
        .unwrap();
    let served = gateway
        .bind_http("127.0.0.1:0".parse().unwrap(), HttpServerConfig::default())
        .await
        .unwrap();
    let sse = served.url().replace("/mcp", "/sse");
    let connection = Connector::new(Client::builder("old", "1"))
        .era(EraChoice::Version("2024-11-05".to_owned()))
        .connect_http(&sse, HttpClientConfig::default())
        .await
        .unwrap();
    assert_eq!(connection.verdict.version, "2024-11-05");
    let result = connection.client.call_tool("a__echo", ()).await.unwrap();
    assert_eq!(text(&result), "echoed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_that_goes_down_is_named_and_its_tools_return_with_it() {
    let upstream = || {
        Server::builder("flaky", "1")
            .tool(ToolDef::new(
                "echo",
                json!({"type": "object"}),
                |_, _| async { Ok(CallToolResult::text("echoed")) },
            ))
            .build()
            .unwrap()
    };
    let addr: std::net::SocketAddr = format!("127.0.0.1:{}", mcp_test_support::free_port())
        .parse()
        .unwrap();
    let bind = move || async move {
        mcp_legacy::http::DualEraHttp::bind(
            addr,
            upstream(),
            HttpServerConfig::default(),
            mcp_legacy::http::LegacyHttpConfig::default(),
        )
        .await
        .unwrap()
    };
    let up = bind().await;
    let url = up.url().to_owned();
    let gateway = Gateway::builder()
        .config(config(&[("flaky", &url)]))
        .connect()
        .await
        .unwrap();
    let served = serve(gateway.server().clone()).await;
    let client = client(&served, EraChoice::Detect, json!({"action": "decline"})).await;
    let tools = |client: Client| async move {
        client
            .list_tools_all()
            .await
            .unwrap()
            .into_iter()
            .map(|t| t.name)
            .collect::<Vec<_>>()
    };
    assert_eq!(tools(client.clone()).await, ["flaky__echo"]);

    up.shutdown(Duration::from_secs(1)).await;
    let mut gone = false;
    for _ in 0..100 {
        if gateway.status()[0].1.is_some() && tools(client.clone()).await.is_empty() {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(gone, "the gateway still serves a stopped upstream");
    let instructions = client.discover().await.unwrap().instructions.unwrap();
    assert!(
        instructions.contains("The server flaky is unavailable"),
        "{instructions}"
    );

    // Back on the same address: the gateway finds it again.
    let _up = bind().await;
    let mut back = false;
    for _ in 0..200 {
        if tools(client.clone()).await == ["flaky__echo"] {
            back = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(back, "the upstream's tools did not return");
    let result = client.call_tool("flaky__echo", ()).await.unwrap();
    assert_eq!(text(&result), "echoed");
    assert!(gateway.status()[0].1.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_task_is_a_task_for_a_client_of_the_extension_and_a_result_for_others() {
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    let opened = Arc::clone(&gate);
    let upstream = Server::builder("slow", "1")
        .tool(
            ToolDef::new("work", json!({"type": "object"}), move |_, _| {
                let gate = Arc::clone(&opened);
                async move {
                    gate.acquire().await.unwrap().forget();
                    Ok(CallToolResult::text("worked"))
                }
            })
            .task_support(TaskSupport::Required),
        )
        .tool(
            ToolDef::new("now", json!({"type": "object"}), |_, _| async {
                Ok(CallToolResult::text("at once"))
            })
            .task_support(TaskSupport::Optional)
            .task_start(mcp_server::tasks::TaskStart::OnEscalate),
        )
        .tool(
            ToolDef::new("ask", json!({"type": "object"}), |_, cx: Context| async move {
                let form: ElicitRequestFormParams = serde_json::from_value(json!({
                    "message": "Name?",
                    "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}
                }))?;
                let answer = cx.elicit("name", ElicitRequestParams::ElicitRequestForm(form))?;
                let name = serde_json::to_value(&answer.content)?["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                Ok(CallToolResult::text(format!("Hello, {name}!")))
            })
            .task_support(TaskSupport::Required),
        )
        .tasks(Tasks::in_memory().poll_interval(Duration::from_millis(10)))
        .build()
        .unwrap();
    let up = serve(upstream).await;
    let gateway = Gateway::builder()
        .config(config(&[("slow", up.url())]))
        .connect()
        .await
        .unwrap();
    let served = serve(gateway.server().clone()).await;
    let tasks = Connector::new(
        Client::builder("tasks", "1")
            .on_elicit(|_| async {
                Ok(
                    serde_json::from_value(json!({"action": "accept", "content": {"name": "Ada"}}))
                        .unwrap(),
                )
            })
            .tasks(
                mcp_client::TaskOptions::new()
                    .poll(Duration::from_millis(1), Duration::from_millis(20)),
            ),
    )
    .connect_http(served.url(), HttpClientConfig::default())
    .await
    .unwrap()
    .client;
    // A task upstream: a task downstream, which ends with the upstream's result.
    let call = tasks
        .call_tool_or_task("slow__work", (), &CallOptions::default())
        .await
        .unwrap();
    let mcp_client::ToolCall::Task(task) = call else {
        panic!("no task for a client of the extension: {call:?}");
    };
    gate.add_permits(1);
    let result = task.wait().await.unwrap();
    assert_eq!(text(&result), "worked");
    // A task upstream that asks the user: asked through the downstream task.
    let asked = tasks.call_tool("slow__ask", ()).await.unwrap();
    assert_eq!(text(&asked), "Hello, Ada!", "{asked:?}");
    // No task upstream: the answer at once.
    let now = tasks
        .call_tool_or_task("slow__now", (), &CallOptions::default())
        .await
        .unwrap();
    assert!(matches!(now, mcp_client::ToolCall::Complete(_)), "{now:?}");

    // A client without the extension, of either era: the gateway follows the task.
    for era in [EraChoice::Detect, EraChoice::Legacy] {
        let plain = client(&served, era, json!({"action": "decline"})).await;
        gate.add_permits(1);
        let result = plain.call_tool("slow__work", ()).await.unwrap();
        assert_eq!(text(&result), "worked");
    }
}
