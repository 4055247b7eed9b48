//! `cargo xtask public-api [--bless]`: the public API of every published library crate,
//! compared with its reviewed snapshot in `api/<crate>.txt`.
//!
//! A change to what a published crate exports (an item added, removed or changed in
//! signature, a type that stops being `Send`) is a semver decision, and it is easy to make
//! by accident: a `pub use`, a derive, a field made public. Checking the rendered API
//! against a snapshot in CI makes every such change show up in review, as a diff of the
//! snapshot that the change has to carry (`--bless` rewrites it).
//!
//! For each crate, rustdoc writes its JSON (`cargo rustdoc -p CRATE --all-features --lib
//! -- -Z unstable-options --output-format json`, on the stable toolchain with
//! `RUSTC_BOOTSTRAP=1`, the JSON output being unstable), and the `public-api` crate renders
//! it one item per line, sorted. Blanket implementations (`impl<T> Any for T` and the like,
//! the same for every type) are left out; auto-trait and derived implementations stay,
//! since losing `Send` or `Clone` breaks users.

use std::collections::BTreeMap;
use std::path::PathBuf;

/// The published library crates (`mcp-cli` is a binary only and has no library API).
const CRATES: &[&str] = &[
    "mcp-types",
    "mcp-json",
    "mcp-jsonrpc",
    "mcp-transport-stdio",
    "mcp-transport-http",
    "mcp-macros",
    "mcp-server",
    "mcp-client",
    "mcp-legacy",
    "mcp-host",
    "mcp",
];

pub(crate) const USAGE: &str = "public-api [--bless]";

pub(crate) fn run(args: &[String]) -> Result<(), String> {
    let bless = match args {
        [] => false,
        [flag] if flag == "--bless" => true,
        _ => return Err(format!("usage: cargo xtask {USAGE}")),
    };
    let dir = crate::project_root().join("api");
    if bless {
        std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    }
    let mut failures = Vec::new();
    for krate in CRATES {
        let actual = render(krate)?;
        let path = dir.join(format!("{krate}.txt"));
        if bless {
            std::fs::write(&path, &actual)
                .map_err(|e| format!("writing {}: {e}", path.display()))?;
            eprintln!("wrote {}", path.display());
            continue;
        }
        let expected = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(format!("reading {}: {e}", path.display())),
        };
        if let Some(diff) = compare(&expected, &actual) {
            failures.push(format!("{krate} (api/{krate}.txt):\n{diff}"));
        }
    }
    if failures.is_empty() {
        if !bless {
            eprintln!("the public API of every published crate matches api/");
        }
        Ok(())
    } else {
        Err(format!(
            "the public API differs from its snapshot (`-` removed, `+` added):\n\n{}\n\
             If the change is intended, run `cargo xtask public-api --bless` and commit \
             api/ with it.",
            failures.join("\n")
        ))
    }
}

/// Builds the crate's rustdoc JSON and renders its public API, one item per line.
fn render(krate: &str) -> Result<String, String> {
    crate::cargo_with(
        &[
            "rustdoc",
            "-p",
            krate,
            "--all-features",
            "--lib",
            "--",
            "-Z",
            "unstable-options",
            "--output-format",
            "json",
        ],
        &[("RUSTC_BOOTSTRAP", "1")],
    )?;
    let json: PathBuf = crate::target_dir()
        .join("doc")
        .join(format!("{}.json", krate.replace('-', "_")));
    let api = public_api::Builder::from_rustdoc_json(&json)
        .omit_blanket_impls(true)
        .build()
        .map_err(|e| format!("reading the public API from {}: {e}", json.display()))?;
    Ok(api.to_string())
}

/// `None` when the two renderings are the same; otherwise the lines only in `expected`
/// (prefixed `-`) and those only in `actual` (prefixed `+`), each in its own order. Lines
/// are compared as a multiset, so an item that appears twice and loses one copy is seen.
fn compare(expected: &str, actual: &str) -> Option<String> {
    if expected == actual {
        return None;
    }
    let mut count: BTreeMap<&str, isize> = BTreeMap::new();
    for line in expected.lines() {
        *count.entry(line).or_default() += 1;
    }
    for line in actual.lines() {
        *count.entry(line).or_default() -= 1;
    }
    let mut diff = String::new();
    let mut left = count.clone();
    for line in expected.lines() {
        let n = left.get_mut(line).expect("counted above");
        if *n > 0 {
            *n -= 1;
            diff.push_str("- ");
            diff.push_str(line);
            diff.push('\n');
        }
    }
    let mut left = count;
    for line in actual.lines() {
        let n = left.get_mut(line).expect("counted above");
        if *n < 0 {
            *n += 1;
            diff.push_str("+ ");
            diff.push_str(line);
            diff.push('\n');
        }
    }
    if diff.is_empty() {
        // The same lines, in another order or with other line endings.
        diff.push_str("  (the same items, ordered or terminated differently)\n");
    }
    Some(diff)
}

#[cfg(test)]
mod tests {
    use super::compare;

    #[test]
    fn equal_renderings_pass() {
        let api = "pub mod a\npub fn a::f()\n";
        assert_eq!(compare(api, api), None);
        assert_eq!(compare("", ""), None);
    }

    #[test]
    fn removed_and_added_lines_are_named() {
        let expected = "pub mod a\npub fn a::f()\npub fn a::g()\n";
        let actual = "pub mod a\npub fn a::g()\npub fn a::h(u8)\n";
        assert_eq!(
            compare(expected, actual).unwrap(),
            "- pub fn a::f()\n+ pub fn a::h(u8)\n"
        );
    }

    #[test]
    fn a_missing_snapshot_lists_every_item_as_added() {
        assert_eq!(
            compare("", "pub mod a\npub fn a::f()\n").unwrap(),
            "+ pub mod a\n+ pub fn a::f()\n"
        );
    }

    #[test]
    fn a_changed_signature_is_one_removal_and_one_addition() {
        let diff = compare("pub fn a::f(u8)\n", "pub fn a::f(u16)\n").unwrap();
        assert_eq!(diff, "- pub fn a::f(u8)\n+ pub fn a::f(u16)\n");
    }

    #[test]
    fn a_lost_duplicate_is_seen() {
        let diff = compare(
            "impl a::T for a::S\nimpl a::T for a::S\n",
            "impl a::T for a::S\n",
        );
        assert_eq!(diff.unwrap(), "- impl a::T for a::S\n");
    }

    #[test]
    fn a_reordering_alone_still_fails() {
        let diff = compare(
            "pub fn a::f()\npub fn a::g()\n",
            "pub fn a::g()\npub fn a::f()\n",
        );
        assert!(diff.unwrap().contains("ordered or terminated differently"));
    }
}
