//! The conformance suite's client: `conformance-client <url>`, the scenario chosen by
//! `MCP_CONFORMANCE_SCENARIO`, built on `mcp-client` over Streamable HTTP through
//! `mcp-legacy`'s dual-era connector. A 2026-07-28 run pins the modern era (no probe, the
//! plain `mcp-client` path); an initialize-era run (`MCP_CONFORMANCE_PROTOCOL_VERSION` of
//! 2025-11-25 or older) detects the era as the spec says and gets a legacy session behind
//! the same `Client` API. What each scenario does is specified in `SCENARIOS-client.md`.
//! Logs go to stderr.

use std::process::ExitCode;
use std::sync::Arc;

use mcp_client::auth::{
    Assertion, AuthorizationRequest, AuthorizationResponse, ClientCredentials, ClientSecret,
    DpopPolicy, EnterpriseIdp, EnterpriseManaged, Interaction, InteractionFuture, NetworkPolicy,
    OAuthClient, OAuthConfig, PreRegistered, WorkloadIdentity,
};
use mcp_client::{Client, Error};
use mcp_legacy::client::{Connector, EraChoice};
use mcp_transport_http::{HttpClient, HttpClientConfig, RawRequest};
use mcp_types::{
    CreateMessageResult, CreateMessageResultContent, ElicitRequestParams, ElicitResult,
    ElicitResultAction, ElicitResultContentValue, JsonObject, ListRootsResult, OrderedMap, Role,
    TextContent,
};
use serde_json::Value;

/// The `client_id` the `auth/basic-cimd` scenario expects: this client's (pretend) Client
/// ID Metadata Document.
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// The user agent of a headless run: the mock's `/authorize` redirects at once, so one GET
/// (redirects are never followed by the transport) yields the redirect's `Location`.
#[derive(Debug)]
struct FollowRedirect;

impl Interaction for FollowRedirect {
    fn redirect_uri(&self) -> String {
        "http://localhost:3000/callback".to_owned()
    }

    fn authorize<'a>(&'a self, request: &'a AuthorizationRequest) -> InteractionFuture<'a> {
        Box::pin(async move {
            eprintln!("authorization request: {}", request.url);
            let agent = HttpClient::new(&request.url, HttpClientConfig::default())?;
            match agent.send(RawRequest::new(http::Method::GET)).await {
                Err(mcp_transport_http::Error::Redirect {
                    location: Some(location),
                    ..
                }) => {
                    eprintln!("redirected to {location}");
                    Ok(AuthorizationResponse::from_redirect_url(&location))
                }
                Err(e) => Err(e.into()),
                Ok(response) => Err(format!(
                    "the authorization endpoint answered {} instead of a redirect",
                    response.status()
                )
                .into()),
            }
        })
    }
}

/// The OAuth client for an `auth/*` scenario, from its context. DPoP is on wherever the
/// authorization server offers it (`auth/dpop`, `auth/dpop-nonce`); no other scenario's
/// server advertises `dpop_signing_alg_values_supported`.
fn oauth_for(url: &str, context: Option<&Value>) -> Result<OAuthClient, mcp_client::Error> {
    let text = |key: &str| {
        context
            .and_then(|c| c.get(key))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let config = if let Some(id_token) = text("idp_id_token") {
        // Enterprise-managed authorization (auth/enterprise-managed-authorization): the ID
        // token exchanged at the IdP for an ID-JAG, then the JWT bearer grant as this
        // client.
        let mut idp = EnterpriseIdp::new(
            text("idp_issuer").unwrap_or_default(),
            text("idp_client_id").unwrap_or_default(),
        );
        idp.token_endpoint = text("idp_token_endpoint");
        let client = ClientCredentials::new(
            text("client_id").unwrap_or_default(),
            ClientSecret::Secret(text("client_secret").unwrap_or_default()),
        );
        OAuthConfig::enterprise_managed(
            url,
            EnterpriseManaged::new(idp, Assertion::Jwt(id_token), client),
        )
    } else if let Some(jwt) = text("valid_jwt") {
        // Workload identity federation (auth/wif-jwt-bearer): the JWT bearer grant with
        // the workload's JWT (the context's other JWTs are for clients that test their own
        // refusals).
        let mut workload = WorkloadIdentity::new(Assertion::Jwt(jwt));
        workload.client_id = text("client_id");
        OAuthConfig::workload_identity(url, workload)
    } else {
        match (
            text("client_id"),
            text("client_secret"),
            text("private_key_pem"),
        ) {
            // Client credentials with a JWT assertion (auth/client-credentials-jwt).
            (Some(id), _, Some(pem)) => OAuthConfig::client_credentials(
                url,
                ClientCredentials::new(
                    id,
                    ClientSecret::PrivateKeyJwt {
                        pem,
                        algorithm: text("signing_algorithm").unwrap_or_else(|| "ES256".to_owned()),
                    },
                ),
            ),
            // Pre-registered credentials for one issuer (auth/pre-registration).
            (Some(id), secret, None) if text("issuer").is_some() => {
                OAuthConfig::authorization_code(url, Arc::new(FollowRedirect)).pre_registered(
                    PreRegistered::new(text("issuer").unwrap_or_default(), id, secret),
                )
            }
            // Client credentials with a secret (auth/client-credentials-basic).
            (Some(id), Some(secret), None) => OAuthConfig::client_credentials(
                url,
                ClientCredentials::new(id, ClientSecret::Secret(secret)),
            ),
            _ => OAuthConfig::authorization_code(url, Arc::new(FollowRedirect)),
        }
    };
    OAuthClient::new(
        config
            .client_name("mcp-rust-conformance-client")
            .client_metadata_url(CLIENT_METADATA_URL)
            .dpop(DpopPolicy::IfSupported)
            .network(NetworkPolicy::development()),
    )
}

async fn client(
    url: &str,
    era: EraChoice,
    oauth: Option<OAuthClient>,
) -> Result<Client, mcp_legacy::Error> {
    let mut builder = Client::builder("mcp-rust-conformance-client", env!("CARGO_PKG_VERSION"))
        .on_elicit(|params| async move { Ok(answer_form(&params)) })
        .on_sample(|_params| async {
            Ok(CreateMessageResult::new(
                CreateMessageResultContent::TextContent(TextContent::new("conformance")),
                "conformance-client",
                Role::Assistant,
            ))
        })
        .on_roots(|| async {
            serde_json::from_value::<ListRootsResult>(
                serde_json::json!({"roots": [{"uri": "file:///tmp/conformance", "name": "conformance"}]}),
            )
            .map_err(|e| e.to_string())
        });
    let mut config = HttpClientConfig::default();
    if let Some(oauth) = oauth {
        // The authorization extensions (the grant's, DPoP) are declared.
        builder = builder.oauth(&oauth);
        config = config.authorizer(Arc::new(oauth));
    }
    let connection = Connector::new(builder)
        .era(era)
        .connect_http(url, config)
        .await?;
    eprintln!("connected: {:?}", connection.verdict);
    Ok(connection.client)
}

/// Accepts a form with a value for every property: its default if the schema gives one
/// (SEP-1034), else booleans true, numbers 1, enums their first value, strings
/// "conformance".
fn answer_form(params: &ElicitRequestParams) -> ElicitResult {
    let mut result = ElicitResult::new(ElicitResultAction::Accept);
    let mut content = OrderedMap::new();
    if let ElicitRequestParams::ElicitRequestForm(form) = params {
        let schema = serde_json::to_value(&form.requested_schema).unwrap_or_default();
        for (name, property) in schema["properties"].as_object().into_iter().flatten() {
            if let Some(default) = property
                .get("default")
                .and_then(|d| serde_json::from_value::<ElicitResultContentValue>(d.clone()).ok())
            {
                content.insert(name.clone(), default);
                continue;
            }
            let value = match property["type"].as_str() {
                Some("boolean") => ElicitResultContentValue::Boolean(true),
                Some("integer" | "number") => ElicitResultContentValue::Integer(1),
                _ => match property["enum"]
                    .as_array()
                    .and_then(|e| e.first())
                    .and_then(Value::as_str)
                {
                    Some(first) => ElicitResultContentValue::String(first.to_owned()),
                    None => ElicitResultContentValue::String("conformance".to_owned()),
                },
            };
            content.insert(name.clone(), value);
        }
    }
    result.content = Some(content);
    result
}

fn object(value: &Value) -> JsonObject {
    value.as_object().cloned().unwrap_or_default()
}

/// Lists the tools (as exposed: invalid annotations dropped) and calls each with a string
/// for every required property.
async fn call_every_tool(client: &Client) -> Result<(), Error> {
    for tool in client.list_tools_all().await? {
        let schema = serde_json::to_value(&tool.input_schema).unwrap_or_default();
        let mut arguments = JsonObject::new();
        for required in schema["required"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            arguments.insert(required.to_owned(), Value::from("us-west1"));
        }
        let result = client.call_tool(&tool.name, arguments).await?;
        eprintln!("{}: {:?}", tool.name, result.content);
    }
    Ok(())
}

/// Every skill entry of a server that declares the Skills extension (none otherwise).
async fn list_skills(client: &Client) -> Result<Vec<mcp_types::skills::SkillEntry>, Error> {
    if client.skills_settings().await?.is_none() {
        eprintln!("the server does not declare the Skills extension");
        return Ok(Vec::new());
    }
    let skills = client.list_skills_all().await?;
    for skill in &skills {
        eprintln!("skill {}: {:?}", skill.uri, skill.description());
    }
    Ok(skills)
}

async fn run(
    scenario: &str,
    url: &str,
    context: Option<Value>,
    era: EraChoice,
) -> Result<(), Box<dyn std::error::Error>> {
    let oauth = if scenario.starts_with("auth/") {
        Some(oauth_for(url, context.as_ref())?)
    } else {
        None
    };
    let client = client(url, era, oauth).await?;
    let outcome = scenario_flow(&client, scenario, context).await;
    // Ends a legacy session (DELETE); nothing for a modern server.
    client.shutdown(std::time::Duration::from_secs(1)).await;
    Ok(outcome?)
}

async fn scenario_flow(
    client: &Client,
    scenario: &str,
    context: Option<Value>,
) -> Result<(), Error> {
    match scenario {
        "tools_call" => {
            client.discover().await?;
            client.list_tools_all().await?;
            let result = client
                .call_tool("add_numbers", object(&serde_json::json!({"a": 5, "b": 3})))
                .await?;
            eprintln!("add_numbers: {:?}", result.content);
        }
        // request-metadata: the first request is refused with -32022 and retried.
        // json-schema-ref-no-deref: the schema's network $ref is never fetched.
        "request-metadata" | "sep-2322-client-request-state" => {
            client.discover().await?;
            client.list_tools_all().await?;
            for tool in [
                "test_mrtr_echo_state",
                "test_mrtr_no_state",
                "test_mrtr_unrelated",
                "test_mrtr_no_result_type",
            ] {
                let result = client.call_tool(tool, JsonObject::new()).await?;
                eprintln!("{tool}: {:?}", result.content);
            }
        }
        "http-standard-headers" => {
            client.discover().await?;
            client.list_tools_all().await?;
            client.call_tool("test_headers", JsonObject::new()).await?;
            client
                .call_tool("my-hyphenated-tool", JsonObject::new())
                .await?;
            client.list_resources_all().await?;
            client
                .read_resource("file:///path/to/file%20name.txt")
                .await?;
            client
                .read_resource("https://example.com/resource?id=123")
                .await?;
            client.list_prompts_all().await?;
            client.get_prompt("test_prompt", ()).await?;
        }
        "http-custom-headers" => {
            client.discover().await?;
            client.list_tools_all().await?;
            let calls = context
                .as_ref()
                .and_then(|c| c["toolCalls"].as_array().cloned())
                .unwrap_or_default();
            for call in calls {
                let name = call["name"].as_str().unwrap_or_default();
                client.call_tool(name, object(&call["arguments"])).await?;
            }
        }
        "http-invalid-tool-headers" => {
            client.discover().await?;
            call_every_tool(client).await?;
        }
        // json-schema-2020-12-preservation: the focal tool's inputSchema, as this client
        // parsed it, goes back verbatim through the echo tool, so the scenario can see
        // which keywords survived.
        "json-schema-2020-12-preservation" => {
            client.discover().await?;
            let tools = client.list_tools_all().await?;
            // Without the focal tool there is nothing to echo; the scenario's own checks
            // then fail.
            let Some(focal) = tools
                .iter()
                .find(|tool| tool.name == "json_schema_2020_12_tool")
            else {
                eprintln!("tools/list has no json_schema_2020_12_tool");
                return Ok(());
            };
            let schema = serde_json::to_value(&focal.input_schema).unwrap_or_default();
            let mut arguments = JsonObject::new();
            arguments.insert("schema".to_owned(), schema);
            let result = client.call_tool("json_schema_echo", arguments).await?;
            eprintln!("json_schema_echo: {:?}", result.content);
        }
        "json-schema-ref-no-deref" => {
            client.discover().await?;
            client.list_tools_all().await?;
        }
        // Skills (SEP-2640): list without reading any file.
        "sep-2640-client-no-prefetch" => {
            list_skills(client).await?;
        }
        // Skills (SEP-2640): load the first skill as a host would (its SKILL.md, verified),
        // then read its supporting files. Every scenario serves a SKILL.md that fails one
        // verification, so the load fails and no supporting file is read.
        "sep-2640-client-verify-digest"
        | "sep-2640-client-verify-size"
        | "sep-2640-client-verify-frontmatter" => {
            let skills = list_skills(client).await?;
            if let Some(entry) = skills.first() {
                let skill = client.load_skill(entry).await?;
                for file in entry.resources.files().into_iter().flatten() {
                    if file.uri != entry.uri {
                        client.read_skill_file(&skill, &file.uri).await?;
                    }
                }
            }
        }
        // The authorization and unscored scenarios: a harmless default flow (for `auth/*`
        // the OAuth client answers the server's challenges underneath).
        _ => {
            client.discover().await?;
            let tools = client.list_tools_all().await?;
            if let Some(first) = tools.first() {
                client.call_tool(&first.name, JsonObject::new()).await?;
            }
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let Some(url) = std::env::args().skip(1).last() else {
        eprintln!("usage: conformance-client [ARGS...] <url>");
        return ExitCode::from(2);
    };
    let Ok(scenario) = std::env::var("MCP_CONFORMANCE_SCENARIO") else {
        eprintln!("MCP_CONFORMANCE_SCENARIO is not set");
        return ExitCode::from(2);
    };
    // The modern revision is pinned (the plain mcp-client path); an initialize-era one
    // makes the client detect the era as the spec says.
    let era = match std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION") {
        Err(_) => EraChoice::Modern,
        Ok(version) if mcp_client::SUPPORTED_VERSIONS.contains(&version.as_str()) => {
            EraChoice::Modern
        }
        Ok(version) if mcp_legacy::server::LEGACY_VERSIONS.contains(&version.as_str()) => {
            EraChoice::Detect
        }
        Ok(version) => {
            eprintln!("protocol version {version} is not supported by this client");
            return ExitCode::from(2);
        }
    };
    let context = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok());
    let Some(runtime) =
        mcp_conformance::runtime(&mut tokio::runtime::Builder::new_current_thread())
    else {
        return ExitCode::FAILURE;
    };
    match runtime.block_on(run(&scenario, &url, context, era)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{scenario}: {e} ({e:?})");
            ExitCode::FAILURE
        }
    }
}
