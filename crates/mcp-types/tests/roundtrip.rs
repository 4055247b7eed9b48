//! Every example message round-trips through the type its folder names.
//!
//! The data: `data/examples-2026-07-28/` is the spec's own example tree (one folder per
//! type); `data/legacy-2025-11-25/` holds golden messages for every legacy-only type and the
//! types 2025-11-25 shapes differently; `data/older/<revision>/` holds messages of the three
//! oldest revisions. Every file is checked against its revision's schema when written.
//!
//! A message passes when it deserializes into the type and serializes back to an equal
//! `serde_json::Value` (members in any order; numbers equal as JSON numbers).

use std::path::{Path, PathBuf};

use serde_json::Value;

mod common;
use common::by_name;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Module {
    Modern,
    Legacy,
}

/// Round-trips `value` through the type `name` in `module`; a legacy name the legacy module
/// lacks is a type both eras share, found at the crate root.
fn roundtrip(module: Module, name: &str, value: &Value) -> Option<Result<Value, String>> {
    match module {
        Module::Legacy => by_name::legacy(name, value).or_else(|| by_name::modern(name, value)),
        Module::Modern => by_name::modern(name, value),
    }
}

fn data_dir(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(relative)
}

/// `(folder name, file path)` for every JSON file one folder level below `dir`.
fn cases(dir: &Path) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    let mut folders: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    folders.sort();
    for folder in folders {
        let name = folder.file_name().unwrap().to_string_lossy().into_owned();
        let mut files: Vec<_> = std::fs::read_dir(&folder)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        out.extend(files.into_iter().map(|f| (name.clone(), f)));
    }
    out
}

/// Checks every case under `relative`, renaming folder names with `rename` first, and
/// reports all failures at once.
fn check_tree(relative: &str, module: Module, rename: fn(&str) -> &str) -> usize {
    let cases = cases(&data_dir(relative));
    assert!(!cases.is_empty(), "no data under {relative}");
    let mut failures = Vec::new();
    for (folder, path) in &cases {
        let text = std::fs::read_to_string(path).unwrap();
        let value: Value = serde_json::from_str(&text).unwrap();
        let shown = path.strip_prefix(data_dir("")).unwrap().display();
        match roundtrip(module, rename(folder), &value) {
            None => failures.push(format!("{shown}: no type named {folder}")),
            Some(Err(e)) => failures.push(format!("{shown}: {e}")),
            Some(Ok(back)) if back != value => failures.push(format!(
                "{shown}: round trip differs\n  in:  {value}\n  out: {back}"
            )),
            Some(Ok(_)) => {}
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    cases.len()
}

#[test]
fn every_2026_07_28_example_round_trips() {
    let n = check_tree("examples-2026-07-28", Module::Modern, |n| n);
    assert!(n >= 129, "the spec ships 129 examples, found {n}");
}

#[test]
fn every_legacy_golden_round_trips() {
    let n = check_tree("legacy-2025-11-25", Module::Legacy, |n| n);
    assert!(n >= 32);
}

/// Definitions the older schemas name differently from 2025-11-25.
fn older_name(name: &str) -> &str {
    match name {
        "JSONRPCError" => "JSONRPCErrorResponse",
        "ResourceReference" => "ResourceTemplateReference",
        other => other,
    }
}

#[test]
fn messages_of_2025_06_18_round_trip_through_legacy_types() {
    check_tree("older/2025-06-18", Module::Legacy, older_name);
}

#[test]
fn messages_of_2025_03_26_round_trip_through_legacy_types() {
    check_tree("older/2025-03-26", Module::Legacy, older_name);
}

#[test]
fn messages_of_2024_11_05_round_trip_through_legacy_types() {
    check_tree("older/2024-11-05", Module::Legacy, older_name);
}

#[test]
fn every_legacy_only_definition_has_golden_data() {
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/2025-11-25/schema.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let modern: Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/2026-07-28/schema.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let covered: Vec<String> = cases(&data_dir("legacy-2025-11-25"))
        .into_iter()
        .map(|(f, _)| f)
        .collect();
    let missing: Vec<&String> = schema["$defs"]
        .as_object()
        .unwrap()
        .keys()
        .filter(|name| modern["$defs"].get(name.as_str()).is_none())
        .filter(|name| !covered.contains(name))
        .collect();
    assert!(
        missing.is_empty(),
        "legacy-only definitions without golden data: {missing:?}"
    );
}
