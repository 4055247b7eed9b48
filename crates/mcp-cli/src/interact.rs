//! The user at the terminal: elicitation forms asked field by field, and progress drawn
//! as a bar. Without a terminal, elicitation is declined (a script cannot answer) and
//! progress is not drawn.
//!
//! Elicitation: <https://modelcontextprotocol.io/specification/2026-07-28/client/elicitation> (form mode: a flat object of
//! primitive fields; URL mode: a link the user opens). Progress:
//! <https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/progress>.

use std::io::{BufRead as _, IsTerminal as _, Write as _};

use mcp_types::{ElicitRequestParams, ElicitResult, ProgressNotificationParams};
use serde_json::{Map, Value, json};

/// Whether both stdin and stderr are a terminal, so questions can be asked.
pub(crate) fn interactive() -> bool {
    std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

/// Answers an elicitation request: on a terminal, asks each field; otherwise declines.
pub(crate) async fn elicit(params: ElicitRequestParams) -> Result<ElicitResult, String> {
    let params = serde_json::to_value(&params).map_err(|e| e.to_string())?;
    if !interactive() {
        return decode(&json!({"action": "decline"}));
    }
    let answer = tokio::task::spawn_blocking(move || ask(&params))
        .await
        .map_err(|e| e.to_string())??;
    decode(&answer)
}

fn decode(value: &Value) -> Result<ElicitResult, String> {
    serde_json::from_value(value.clone()).map_err(|e| e.to_string())
}

/// Asks the form on stderr and reads answers from stdin.
fn ask(params: &Value) -> Result<Value, String> {
    let mut err = std::io::stderr().lock();
    let stdin = std::io::stdin();
    let mut lines = stdin.lock().lines();
    let message = params["message"].as_str().unwrap_or("The server asks:");
    let _ = writeln!(err, "\n? {message}");
    if params["mode"] == "url" {
        let _ = writeln!(err, "  open: {}", params["url"].as_str().unwrap_or("?"));
        let _ = write!(err, "  done? [y/N] ");
        let _ = err.flush();
        let yes = matches!(
            lines
                .next()
                .transpose()
                .map_err(|e| e.to_string())?
                .as_deref()
                .map(str::trim),
            Some("y" | "Y" | "yes")
        );
        return Ok(json!({"action": if yes { "accept" } else { "decline" }}));
    }
    let schema = &params["requestedSchema"];
    let required = crate::required(schema);
    let mut content = Map::new();
    for (name, field) in schema["properties"].as_object().into_iter().flatten() {
        let label = field["title"].as_str().unwrap_or(name);
        let choices = choices(field);
        let mut prompt = format!("  {label}");
        if !choices.is_empty() {
            let _ = write!(prompt, " ({})", choices.join("/"));
        } else if let Some(kind) = field["type"].as_str() {
            let _ = write!(prompt, " ({kind})");
        }
        if let Some(default) = field.get("default") {
            let _ = write!(prompt, " [{default}]");
        }
        let optional = !required.contains(&name.as_str());
        let value = loop {
            let _ = write!(err, "{prompt}: ");
            let _ = err.flush();
            let Some(line) = lines.next().transpose().map_err(|e| e.to_string())? else {
                // Stdin closed: the user went away.
                return Ok(json!({"action": "cancel"}));
            };
            let line = line.trim();
            if line.is_empty() {
                if let Some(default) = field.get("default") {
                    break Some(default.clone());
                }
                if optional {
                    break None;
                }
                let _ = writeln!(err, "  (required)");
                continue;
            }
            match parse(field, line) {
                Ok(value) => break Some(value),
                Err(why) => {
                    let _ = writeln!(err, "  {why}");
                }
            }
        };
        if let Some(value) = value {
            content.insert(name.clone(), value);
        }
    }
    Ok(json!({"action": "accept", "content": content}))
}

/// The allowed values of an enum field (`enum`, or the `const`s of `oneOf`).
fn choices(field: &Value) -> Vec<String> {
    if let Some(values) = field["enum"].as_array() {
        return values
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect();
    }
    field["oneOf"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|o| o["const"].as_str().map(str::to_owned))
        .collect()
}

/// One typed answer.
fn parse(field: &Value, text: &str) -> Result<Value, String> {
    match field["type"].as_str() {
        Some("integer") => text
            .parse::<i64>()
            .map(Value::from)
            .map_err(|_| "an integer, please".to_owned()),
        Some("number") => text
            .parse::<f64>()
            .map(Value::from)
            .map_err(|_| "a number, please".to_owned()),
        Some("boolean") => match text {
            "y" | "Y" | "yes" | "true" => Ok(Value::Bool(true)),
            "n" | "N" | "no" | "false" => Ok(Value::Bool(false)),
            _ => Err("y or n, please".to_owned()),
        },
        Some("array") => Ok(Value::Array(
            text.split(',').map(|s| Value::from(s.trim())).collect(),
        )),
        _ => {
            let choices = choices(field);
            if choices.is_empty() || choices.iter().any(|c| c == text) {
                Ok(Value::from(text))
            } else {
                Err(format!("one of {}, please", choices.join(", ")))
            }
        }
    }
}

/// Draws progress as a bar on stderr when it is a terminal.
pub(crate) fn progress(update: &ProgressNotificationParams) {
    if !std::io::stderr().is_terminal() {
        return;
    }
    let message = update.message.as_deref().unwrap_or("");
    let progress = update.progress.as_f64().unwrap_or(0.0);
    let total = update.total.as_ref().and_then(serde_json::Number::as_f64);
    let line = match total.filter(|t| *t > 0.0) {
        Some(total) => {
            let fraction = (progress / total).clamp(0.0, 1.0);
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let filled = (fraction * 30.0).round() as usize;
            format!(
                "[{}{}] {:>3.0}% {message}",
                "#".repeat(filled),
                ".".repeat(30 - filled),
                fraction * 100.0
            )
        }
        None => format!("{progress} {message}"),
    };
    let mut err = std::io::stderr().lock();
    let _ = write!(err, "\r\x1b[2K{line}");
    let _ = err.flush();
}

/// Ends a progress line, if one was drawn.
pub(crate) fn progress_done() {
    if std::io::stderr().is_terminal() {
        let _ = write!(std::io::stderr(), "\r\x1b[2K");
    }
}

use std::fmt::Write as _;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_typed_by_the_field() {
        assert_eq!(parse(&json!({"type": "integer"}), "42"), Ok(json!(42)));
        assert!(parse(&json!({"type": "integer"}), "x").is_err());
        assert_eq!(parse(&json!({"type": "boolean"}), "y"), Ok(json!(true)));
        assert_eq!(
            parse(&json!({"type": "string", "enum": ["a", "b"]}), "b"),
            Ok(json!("b"))
        );
        assert!(parse(&json!({"type": "string", "enum": ["a", "b"]}), "c").is_err());
        assert_eq!(
            parse(
                &json!({"type": "string", "oneOf": [{"const": "v1", "title": "One"}]}),
                "v1"
            ),
            Ok(json!("v1"))
        );
    }
}
