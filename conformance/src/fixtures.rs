//! The fixtures of the conformance suite's 2026-07-28 server scenarios, built with
//! `mcp-server` exactly as `SCENARIOS.md` specifies them.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use mcp_server::{
    Context, PromptDef, ResourceDef, ResourceTemplateDef, Server, ToolDef, ToolError,
};
use mcp_types::{
    BlobResourceContents, CallToolResult, ContentBlock, CreateMessageRequestParams,
    CreateMessageResultContent, ElicitRequestFormParams, ElicitRequestParams,
    EmbeddedResourceResource, GetPromptResult, LoggingLevel, PromptMessage, Role,
    TextResourceContents,
};
use serde_json::{Value, json};

/// A 1×1 red PNG.
pub const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// A 60-byte silent WAV.
pub const WAV: &str =
    "UklGRjQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YRAAAAAAAAAAAAAAAAAAAAAAAAAA";

fn no_args() -> Value {
    json!({"type": "object", "properties": {}})
}

pub(crate) fn form(
    message: &str,
    field: &str,
    kind: &str,
) -> Result<ElicitRequestParams, ToolError> {
    let params: ElicitRequestFormParams = serde_json::from_value(json!({
        "message": message,
        "requestedSchema": {"type": "object", "properties": {field: {"type": kind}}, "required": [field]}
    }))?;
    Ok(ElicitRequestParams::ElicitRequestForm(params))
}

fn form_schema(message: &str, schema: &Value) -> Result<ElicitRequestParams, ToolError> {
    let params: ElicitRequestFormParams =
        serde_json::from_value(json!({"message": message, "requestedSchema": schema}))?;
    Ok(ElicitRequestParams::ElicitRequestForm(params))
}

/// `Elicitation completed: action=…, content={…}`, as the 2025-11-25 scenarios expect.
fn elicitation_summary(answer: &mcp_types::ElicitResult) -> Result<CallToolResult, ToolError> {
    let action = serde_json::to_value(answer.action)?;
    let content = serde_json::to_value(&answer.content)?;
    Ok(CallToolResult::text(format!(
        "Elicitation completed: action={}, content={content}",
        action.as_str().unwrap_or_default()
    )))
}

fn sampling(text: &str, max_tokens: i64) -> Result<CreateMessageRequestParams, ToolError> {
    Ok(serde_json::from_value(json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
        "maxTokens": max_tokens
    }))?)
}

fn sampled_text(content: &CreateMessageResultContent) -> String {
    match content {
        CreateMessageResultContent::TextContent(t) => t.text.clone(),
        other => format!("{other:?}"),
    }
}

fn text_resource(uri: &str, mime: &str, text: &str) -> ContentBlock {
    let mut contents = TextResourceContents::new(text, uri);
    contents.mime_type = Some(mime.to_owned());
    ContentBlock::EmbeddedResource(mcp_types::EmbeddedResource::new(
        EmbeddedResourceResource::TextResourceContents(contents),
    ))
}

pub(crate) fn field(answer: &mcp_types::ElicitResult, name: &str) -> Result<String, ToolError> {
    answer
        .content
        .as_ref()
        .and_then(|c| c.get(name))
        .map(|v| match v {
            mcp_types::ElicitResultContentValue::String(s) => s.clone(),
            other => format!("{other:?}"),
        })
        .ok_or_else(|| ToolError::invalid_params(format!("the answer has no {name:?}")))
}

/// A tool that registers an item of the server behind `handle` again with `re_add`, which
/// notifies the listeners that its list changed, and answers `changed`.
fn list_change(
    name: &str,
    description: &str,
    changed: &'static str,
    handle: &Arc<OnceLock<Server>>,
    re_add: fn(&Server),
) -> ToolDef {
    let handle = Arc::clone(handle);
    ToolDef::new(name, no_args(), move |_, _| {
        let handle = Arc::clone(&handle);
        async move {
            if let Some(server) = handle.get() {
                re_add(server);
            }
            Ok(CallToolResult::text(changed))
        }
    })
    .description(description)
}

/// Every fixture, in the order `SCENARIOS.md` suggests.
pub fn server() -> Result<Server, mcp_server::Error> {
    let handle: Arc<OnceLock<Server>> = Arc::new(OnceLock::new());

    let builder = Server::builder("rust-mcp-conformance-server", env!("CARGO_PKG_VERSION"))
        .instructions("Fixtures of the MCP conformance suite.")
        .tool(
            ToolDef::new("test_simple_text", no_args(), |_, _| async {
                Ok(CallToolResult::text("This is a simple text response for testing."))
            })
            .description("Returns a simple text response"),
        )
        .tool(
            ToolDef::new("test_image_content", no_args(), |_, _| async {
                Ok(CallToolResult::new(vec![ContentBlock::image(PNG, "image/png")]))
            })
            .description("Returns an image"),
        )
        .tool(
            ToolDef::new("test_audio_content", no_args(), |_, _| async {
                Ok(CallToolResult::new(vec![ContentBlock::audio(WAV, "audio/wav")]))
            })
            .description("Returns audio"),
        )
        .tool(
            ToolDef::new("test_embedded_resource", no_args(), |_, _| async {
                Ok(CallToolResult::new(vec![text_resource(
                    "test://embedded-resource",
                    "text/plain",
                    "This is an embedded resource content.",
                )]))
            })
            .description("Returns an embedded resource"),
        )
        .tool(
            ToolDef::new("test_multiple_content_types", no_args(), |_, _| async {
                Ok(CallToolResult::new(vec![
                    ContentBlock::text("Multiple content types test:"),
                    ContentBlock::image(PNG, "image/png"),
                    text_resource(
                        "test://mixed-content-resource",
                        "application/json",
                        "{\"test\":\"data\",\"value\":123}",
                    ),
                ]))
            })
            .description("Returns text, an image and a resource"),
        )
        .tool(
            ToolDef::new("test_error_handling", no_args(), |_, _| async {
                Err(ToolError::failed("This tool intentionally returns an error for testing"))
            })
            .description("Always fails"),
        )
        .tool(
            ToolDef::new("test_tool_with_progress", no_args(), |_, cx: Context| async move {
                for step in [0.0, 50.0, 100.0] {
                    cx.progress(step, Some(100.0), None).await;
                    if step < 100.0 {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                }
                Ok(CallToolResult::text("Progress test completed"))
            })
            .description("Reports progress"),
        )
        .tool(
            ToolDef::new("test_missing_capability", no_args(), |_, cx: Context| async move {
                let answer = cx.sample("question", sampling("Say something", 50)?)?;
                Ok(CallToolResult::text(sampled_text(&answer.content)))
            })
            .description("Needs the client's sampling capability"),
        )
        .tool(
            ToolDef::new("test_streaming_elicitation", no_args(), |_, cx: Context| async move {
                let answer = cx.elicit("value", form("Please provide a value", "value", "string")?)?;
                Ok(CallToolResult::text(format!("Received: {}", field(&answer, "value")?)))
            })
            .description("Asks the user for a value"),
        )
        .tool(
            ToolDef::new("test_logging_tool", no_args(), |_, cx: Context| async move {
                cx.log(LoggingLevel::Info, json!("Logging tool started")).await;
                cx.log(LoggingLevel::Info, json!("Logging tool finished")).await;
                Ok(CallToolResult::text("Logging done"))
            })
            .description("Logs when asked to"),
        )
        // The 2025-11-25 scenarios (`cargo xtask conformance server --revision
        // 2025-11-25`): written once, in the input_required form; a legacy session gets
        // real `sampling/createMessage` and `elicitation/create` requests from mcp-legacy.
        .tool(
            ToolDef::new("test_tool_with_logging", no_args(), |_, cx: Context| async move {
                cx.log(LoggingLevel::Info, json!("Tool execution started")).await;
                tokio::time::sleep(Duration::from_millis(50)).await;
                cx.log(LoggingLevel::Info, json!("Tool processing data")).await;
                tokio::time::sleep(Duration::from_millis(50)).await;
                cx.log(LoggingLevel::Info, json!("Tool execution completed")).await;
                Ok(CallToolResult::text("Logging tool completed"))
            })
            .description("Sends three log messages while it runs"),
        )
        .tool(
            ToolDef::new(
                "test_sampling",
                json!({"type": "object", "properties": {"prompt": {"type": "string"}}, "required": ["prompt"]}),
                |args, cx: Context| async move {
                    let prompt = args["prompt"].as_str().unwrap_or_default();
                    let answer = cx.sample("sampling", sampling(prompt, 100)?)?;
                    Ok(CallToolResult::text(format!("LLM response: {}", sampled_text(&answer.content))))
                },
            )
            .description("Asks the client's model the given prompt"),
        )
        .tool(
            ToolDef::new(
                "test_elicitation",
                json!({"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}),
                |args, cx: Context| async move {
                    let message = args["message"].as_str().unwrap_or_default();
                    let schema = json!({
                        "type": "object",
                        "properties": {
                            "username": {"type": "string", "description": "User's response"},
                            "email": {"type": "string", "description": "User's email address"}
                        },
                        "required": ["username", "email"]
                    });
                    let answer = cx.elicit("elicitation", form_schema(message, &schema)?)?;
                    let action = serde_json::to_value(answer.action)?;
                    let content = serde_json::to_value(&answer.content)?;
                    Ok(CallToolResult::text(format!(
                        "User response: action={}, content={content}",
                        action.as_str().unwrap_or_default()
                    )))
                },
            )
            .description("Asks the user for a name and an email address"),
        )
        .tool(
            ToolDef::new("test_elicitation_sep1034_defaults", no_args(), |_, cx: Context| async move {
                let schema = json!({
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "default": "John Doe"},
                        "age": {"type": "integer", "default": 30},
                        "score": {"type": "number", "default": 95.5},
                        "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
                        "verified": {"type": "boolean", "default": true}
                    }
                });
                let answer = cx.elicit("defaults", form_schema("Please review your details", &schema)?)?;
                elicitation_summary(&answer)
            })
            .description("Elicits with a default for every primitive type"),
        )
        .tool(
            ToolDef::new("test_elicitation_sep1330_enums", no_args(), |_, cx: Context| async move {
                let schema = json!({
                    "type": "object",
                    "properties": {
                        "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
                        "titledSingle": {"type": "string", "oneOf": [
                            {"const": "value1", "title": "First Option"},
                            {"const": "value2", "title": "Second Option"},
                            {"const": "value3", "title": "Third Option"}
                        ]},
                        "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"],
                            "enumNames": ["Option One", "Option Two", "Option Three"]},
                        "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
                        "titledMulti": {"type": "array", "items": {"anyOf": [
                            {"const": "value1", "title": "First Choice"},
                            {"const": "value2", "title": "Second Choice"},
                            {"const": "value3", "title": "Third Choice"}
                        ]}}
                    }
                });
                let answer = cx.elicit("enums", form_schema("Pick your options", &schema)?)?;
                elicitation_summary(&answer)
            })
            .description("Elicits with every enum form"),
        )
        .tool(list_change(
            "test_trigger_tool_change",
            "Notifies listeners that the tool list changed",
            "Tool list changed",
            &handle,
            |server| {
                if let Some(tool) = server.tool("test_simple_text") {
                    let _registered = server.add_tool(tool);
                }
            },
        ))
        .tool(list_change(
            "test_trigger_prompt_change",
            "Notifies listeners that the prompt list changed",
            "Prompt list changed",
            &handle,
            |server| {
                if let Some(prompt) = server.prompt("test_simple_prompt") {
                    let _registered = server.add_prompt(prompt);
                }
            },
        ))
        .tool(
            ToolDef::new("test_input_required_result_elicitation", no_args(), |_, cx: Context| async move {
                let answer = cx.elicit("user_name", form("What is your name?", "name", "string")?)?;
                Ok(CallToolResult::text(format!("Hello, {}!", field(&answer, "name")?)))
            })
            .description("Asks for the user's name"),
        )
        .tool(
            ToolDef::new("test_input_required_result_sampling", no_args(), |_, cx: Context| async move {
                let answer = cx.sample("capital_question", sampling("What is the capital of France?", 100)?)?;
                Ok(CallToolResult::text(sampled_text(&answer.content)))
            })
            .description("Asks the client's model a question"),
        )
        .tool(
            ToolDef::new("test_input_required_result_list_roots", no_args(), |_, cx: Context| async move {
                let roots = cx.roots("client_roots")?;
                let uris: Vec<&str> = roots.roots.iter().map(|r| r.uri.as_str()).collect();
                Ok(CallToolResult::text(format!("Roots: {}", uris.join(", "))))
            })
            .description("Asks for the client's roots"),
        )
        .tool(
            ToolDef::new("test_input_required_result_request_state", no_args(), |_, cx: Context| async move {
                if cx.state().is_none() {
                    cx.set_state(json!("state-ok"));
                }
                let answer = cx.elicit("confirm", form("Please confirm", "ok", "boolean")?)?;
                let state = cx.state().and_then(Value::as_str).unwrap_or("no-state").to_owned();
                Ok(CallToolResult::text(format!("{state}: {:?}", answer.action)))
            })
            .description("Carries state across a round trip"),
        )
        .tool(
            ToolDef::new("test_input_required_result_multiple_inputs", no_args(), |_, cx: Context| async move {
                cx.set_state(json!("multiple"));
                let name = cx.elicit("user_name", form("What is your name?", "name", "string")?);
                let greeting = cx.sample("greeting", sampling("Generate a greeting", 50)?);
                let roots = cx.roots("client_roots");
                let (name, greeting, roots) = (name?, greeting?, roots?);
                Ok(CallToolResult::text(format!(
                    "{} / {} / {} roots",
                    field(&name, "name")?,
                    sampled_text(&greeting.content),
                    roots.roots.len()
                )))
            })
            .description("Asks three questions at once"),
        )
        .tool(
            ToolDef::new("test_input_required_result_multi_round", no_args(), |_, cx: Context| async move {
                let round = cx.state().and_then(|s| s["round"].as_u64()).unwrap_or(1);
                if round == 1 {
                    cx.set_state(json!({"round": 1}));
                    let name = cx.elicit("step1", form("Step 1: What is your name?", "name", "string")?)?;
                    cx.set_state(json!({"round": 2, "name": field(&name, "name")?}));
                    return Err(ToolError::InputRequired).or_else(|e| {
                        // Ask step 2 in the same run, so the next round carries a new state.
                        let _ = cx.elicit("step2", form("Step 2: What is your favorite color?", "color", "string")?);
                        Err(e)
                    });
                }
                let color = cx.elicit("step2", form("Step 2: What is your favorite color?", "color", "string")?)?;
                let name = cx.state().and_then(|s| s["name"].as_str()).unwrap_or_default().to_owned();
                Ok(CallToolResult::text(format!("{name} likes {}", field(&color, "color")?)))
            })
            .description("Asks two questions in two rounds"),
        )
        .tool(
            ToolDef::new("test_input_required_result_tampered_state", no_args(), |_, cx: Context| async move {
                cx.set_state(json!("sealed"));
                let answer = cx.elicit("confirm", form("Please confirm", "ok", "boolean")?)?;
                Ok(CallToolResult::text(format!("confirmed: {:?}", answer.action)))
            })
            .description("Refuses a tampered requestState"),
        )
        .tool(
            ToolDef::new("test_input_required_result_capabilities", no_args(), |_, cx: Context| async move {
                let caps = cx.client_capabilities().clone();
                let mut asked = Vec::new();
                if caps.sampling.is_some() {
                    asked.push(cx.sample("question", sampling("Say hello", 20)?).map(|a| sampled_text(&a.content)));
                }
                if caps.elicitation.is_some() {
                    asked.push(cx.elicit("confirm", form("Please confirm", "ok", "boolean")?).map(|a| format!("{:?}", a.action)));
                }
                if caps.roots.is_some() {
                    asked.push(cx.roots("client_roots").map(|r| format!("{} roots", r.roots.len())));
                }
                let answers: Result<Vec<String>, _> = asked.into_iter().collect();
                Ok(CallToolResult::text(format!("answers: {}", answers?.join(", "))))
            })
            .description("Asks only for what the client declared"),
        )
        .tool(
            ToolDef::new("json_schema_2020_12_tool", json_schema_2020_12(), |_, _| async {
                Ok(CallToolResult::text("ok"))
            })
            .description("Tool with JSON Schema 2020-12 features"),
        )
        // http-custom-header-server-validation: a string argument mirrored into the
        // `Mcp-Param-Region` header, which the server checks against the body.
        .tool(
            ToolDef::new(
                "test_custom_header",
                json!({
                    "type": "object",
                    "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
                    "required": ["region"]
                }),
                |args, _| async move {
                    let region = args.get("region").and_then(Value::as_str).unwrap_or_default();
                    Ok(CallToolResult::text(format!("region: {region}")))
                },
            )
            .description("Echoes its region, mirrored into the Mcp-Param-Region header"),
        )
        .resource(
            ResourceDef::new("test://static-text", "static-text", |uri, _| async move {
                let mut contents = TextResourceContents::new("This is the content of the static text resource.", uri);
                contents.mime_type = Some("text/plain".to_owned());
                Ok(vec![EmbeddedResourceResource::TextResourceContents(contents)])
            })
            .mime_type("text/plain")
            .description("A static text resource"),
        )
        .resource(
            ResourceDef::new("test://static-binary", "static-binary", |uri, _| async move {
                let mut contents = BlobResourceContents::new(PNG, uri);
                contents.mime_type = Some("image/png".to_owned());
                Ok(vec![EmbeddedResourceResource::BlobResourceContents(contents)])
            })
            .mime_type("image/png")
            .description("A static binary resource"),
        )
        .resource(
            ResourceDef::new("test://watched-resource", "watched-resource", |uri, _| async move {
                let mut contents = TextResourceContents::new("Watched resource content", uri);
                contents.mime_type = Some("text/plain".to_owned());
                Ok(vec![EmbeddedResourceResource::TextResourceContents(contents)])
            })
            .mime_type("text/plain")
            .description("A resource that changes"),
        )
        .resource_template(
            ResourceTemplateDef::new("test://template/{id}/data", "template-data", |uri, vars, _| async move {
                let id = vars.get("id").cloned().unwrap_or_default();
                let text = json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")}).to_string();
                let mut contents = TextResourceContents::new(text, uri);
                contents.mime_type = Some("application/json".to_owned());
                Ok(vec![EmbeddedResourceResource::TextResourceContents(contents)])
            })
            .map(|t| t.mime_type("application/json").description("Data by id")),
        )
        .prompt(
            PromptDef::new("test_simple_prompt", |_, _| async {
                Ok(GetPromptResult::new(vec![PromptMessage::new(
                    ContentBlock::text("This is a simple prompt for testing."),
                    Role::User,
                )]))
            })
            .description("A simple prompt"),
        )
        .prompt(
            PromptDef::new("test_prompt_with_arguments", |args, _| async move {
                let arg = |k: &str| args.get(k).cloned().unwrap_or_default();
                Ok(GetPromptResult::new(vec![PromptMessage::new(
                    ContentBlock::text(format!("Prompt with arguments: arg1='{}', arg2='{}'", arg("arg1"), arg("arg2"))),
                    Role::User,
                )]))
            })
            .description("A prompt with arguments")
                    .argument("arg1", "First test argument", true)
                    .argument("arg2", "Second test argument", true),
        )
        .prompt(
            PromptDef::new("test_prompt_with_embedded_resource", |args, _| async move {
                let uri = args.get("resourceUri").cloned().unwrap_or_default();
                Ok(GetPromptResult::new(vec![
                    PromptMessage::new(text_resource(&uri, "text/plain", "Embedded resource content for testing."), Role::User),
                    PromptMessage::new(ContentBlock::text("Please process the embedded resource above."), Role::User),
                ]))
            })
            .description("A prompt with an embedded resource").argument("resourceUri", "The resource's URI", true),
        )
        .prompt(
            PromptDef::new("test_prompt_with_image", |_, _| async {
                Ok(GetPromptResult::new(vec![
                    PromptMessage::new(ContentBlock::image(PNG, "image/png"), Role::User),
                    PromptMessage::new(ContentBlock::text("Please analyze the image above."), Role::User),
                ]))
            })
            .description("A prompt with an image"),
        )
        .prompt(
            PromptDef::new("test_input_required_result_prompt", |_, cx: Context| async move {
                let answer = cx.elicit("user_context", form("What context should the prompt use?", "context", "string")?)?;
                Ok(GetPromptResult::new(vec![PromptMessage::new(
                    ContentBlock::text(format!("Prompt context: {}", field(&answer, "context")?)),
                    Role::User,
                )]))
            })
            .description("A prompt that asks the user first"),
        )
        .completion(|params, _| async move {
            const VALUES: [&str; 4] = ["test", "test-value", "testing", "other"];
            let typed = params.argument.value;
            let values: Vec<String> = VALUES.iter().filter(|v| v.starts_with(&typed)).map(|v| (*v).to_owned()).collect();
            let mut completion = mcp_types::CompleteResultCompletion::new(values.clone());
            completion.total = i64::try_from(values.len()).ok();
            completion.has_more = Some(false);
            Ok(completion)
        });
    let server = crate::skill_fixtures::install(crate::task_fixtures::install(builder)).build()?;
    let _ = handle.set(server.clone());
    Ok(server)
}

fn json_schema_2020_12() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": { "street": { "type": "string" }, "city": { "type": "string" } }
            }
        },
        "properties": {
            "name": { "type": "string" },
            "address": { "$ref": "#/$defs/address" },
            "contactMethod": { "type": "string", "enum": ["phone", "email"] },
            "phone": { "type": "string" },
            "email": { "type": "string" }
        },
        "allOf": [{ "anyOf": [{ "required": ["phone"] }, { "required": ["email"] }] }],
        "if": { "properties": { "contactMethod": { "const": "phone" } }, "required": ["contactMethod"] },
        "then": { "required": ["phone"] },
        "else": { "required": ["email"] },
        "additionalProperties": false
    })
}
