//! `cargo xtask codegen`: the MCP schemas → `crates/mcp-types/src/generated/`.
//!
//! The pipeline is schema definitions → the intermediate form (`ir`) → Rust text (`emit`) →
//! rustfmt. The output is checked in; `--check` (and the test at the bottom of this file,
//! which plain `cargo test` runs) fails when a checked-in file differs from what the
//! generator produces now, so a hand edit or a schema update without regeneration is caught.

mod emit;
mod ir;

use std::collections::BTreeSet;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Map, Value};

/// Whether stale files are rewritten or reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Write,
    Check,
}

const MODERN: &str = "2026-07-28";
const LEGACY: &str = "2025-11-25";

pub(crate) fn run(mode: Mode) -> Result<(), String> {
    let crate_dir = crate::project_root().join("crates/mcp-types");
    let modern_schema = read_schema(&crate_dir, MODERN)?;
    let legacy_schema = read_schema(&crate_dir, LEGACY)?;
    let modern = definitions(&modern_schema)?;
    let legacy = definitions(&legacy_schema)?;

    let modern_names: BTreeSet<String> = modern.keys().cloned().collect();
    let legacy_names = legacy_selection(modern, legacy);

    let mut tags = ir::Tags::default();
    let mut modern_module = ir::Module::new(modern, ir::Scope::Root, &modern_names, modern);
    modern_module.build(&mut tags);
    let mut legacy_module = ir::Module::new(legacy, ir::Scope::Legacy, &legacy_names, modern);
    legacy_module.build(&mut tags);

    let modern_header =
        format!("//! Every type of MCP revision {MODERN}, from `schema/{MODERN}/schema.json`.\n\n");
    let legacy_header = format!(
        "//! The initialize-era types: every definition of MCP revision {LEGACY}\n\
         //! (`schema/{LEGACY}/schema.json`) that revision {MODERN} lacks or shapes differently.\n\
         //!\n\
         //! A definition both revisions share is the modern type at the crate root and is\n\
         //! referenced from here. Messages of the older revisions 2025-06-18, 2025-03-26 and\n\
         //! 2024-11-05 deserialize into these types and the shared ones: each of those revisions\n\
         //! is a subset of {LEGACY} on the wire.\n\n"
    );
    let files = [
        (
            "src/generated/modern.rs",
            emit::module(&modern_header, &modern_module.items, ir::Scope::Root),
        ),
        (
            "src/generated/legacy.rs",
            emit::module(&legacy_header, &legacy_module.items, ir::Scope::Legacy),
        ),
        ("src/generated/tags.rs", emit::tags(&tags)),
        (
            "tests/generated/types.rs",
            emit::type_list(&modern_module.items, &legacy_module.items),
        ),
    ];

    let mut stale = Vec::new();
    for (path, text) in files {
        let text = rustfmt(&text)?;
        let path = crate_dir.join(path);
        if std::fs::read_to_string(&path).ok().as_deref() == Some(text.as_str()) {
            continue;
        }
        match mode {
            Mode::Check => stale.push(path),
            Mode::Write => {
                if let Some(dir) = path.parent() {
                    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
                }
                std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
                eprintln!("updated {}", path.display());
            }
        }
    }
    if stale.is_empty() {
        Ok(())
    } else {
        let list: Vec<String> = stale.iter().map(|p| p.display().to_string()).collect();
        Err(format!(
            "generated files are stale (edited by hand, or the generator or schemas changed):\n  {}\nrun `cargo xtask codegen` and commit the result",
            list.join("\n  ")
        ))
    }
}

fn read_schema(crate_dir: &Path, revision: &str) -> Result<Value, String> {
    let path: PathBuf = crate_dir.join("schema").join(revision).join("schema.json");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

fn definitions(schema: &Value) -> Result<&Map<String, Value>, String> {
    schema
        .get("$defs")
        .or_else(|| schema.get("definitions"))
        .and_then(Value::as_object)
        .ok_or_else(|| "schema has no `$defs`".to_owned())
}

/// The legacy module's definitions: those the modern schema lacks, those it shapes
/// differently, and (to a fixed point) those that refer to either.
fn legacy_selection(modern: &Map<String, Value>, legacy: &Map<String, Value>) -> BTreeSet<String> {
    let mut selected: BTreeSet<String> = legacy
        .iter()
        .filter(|(name, def)| {
            modern
                .get(*name)
                .is_none_or(|m| normalize(m) != normalize(def))
        })
        .map(|(name, _)| name.clone())
        .collect();
    loop {
        let before = selected.len();
        for (name, def) in legacy {
            if !selected.contains(name) && refers_to_any(def, &selected) {
                selected.insert(name.clone());
            }
        }
        if selected.len() == before {
            return selected;
        }
    }
}

/// A definition without descriptions, and with every `_meta` member reduced to a marker
/// (2025-11-25 spells it inline, 2026-07-28 as a reference; both become the same type).
fn normalize(schema: &Value) -> Value {
    match schema {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| *k != "description")
                .map(|(k, v)| {
                    let v = if k == "properties" {
                        Value::Object(
                            v.as_object()
                                .into_iter()
                                .flatten()
                                .map(|(pk, pv)| {
                                    let pv = if pk == "_meta" {
                                        Value::from("META")
                                    } else {
                                        normalize(pv)
                                    };
                                    (pk.clone(), pv)
                                })
                                .collect(),
                        )
                    } else {
                        normalize(v)
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(normalize).collect()),
        other => other.clone(),
    }
}

fn refers_to_any(schema: &Value, names: &BTreeSet<String>) -> bool {
    match schema {
        Value::Object(map) => {
            ir::ref_name(schema).is_some_and(|n| names.contains(n))
                || map.values().any(|v| refers_to_any(v, names))
        }
        Value::Array(items) => items.iter().any(|v| refers_to_any(v, names)),
        _ => false,
    }
}

fn rustfmt(text: &str) -> Result<String, String> {
    let mut child = Command::new("rustfmt")
        .args(["--edition", "2024", "--emit", "stdout", "--quiet"])
        .current_dir(crate::project_root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run rustfmt: {e}"))?;
    let mut stdin = child.stdin.take().ok_or("rustfmt has no stdin")?;
    let input = text.to_owned();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let output = child
        .wait_with_output()
        .map_err(|e| format!("rustfmt: {e}"))?;
    writer
        .join()
        .map_err(|_| "rustfmt writer panicked".to_owned())?
        .map_err(|e| format!("writing to rustfmt: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "rustfmt rejected the generated code:\n{}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    String::from_utf8(output.stdout).map_err(|e| format!("rustfmt output: {e}"))
}

#[cfg(test)]
mod tests {
    /// Plain `cargo test` fails when a generated file was edited by hand or is stale.
    #[test]
    fn generated_code_is_fresh() {
        if let Err(message) = super::run(super::Mode::Check) {
            panic!("{message}");
        }
    }
}
