//! Replays every input of the checked-in corpus (`corpus/<target>/`) and every saved
//! crash (`regressions/<target>/`) through its target: what the fuzzer once found stays
//! fixed, on the stable toolchain, without libFuzzer's driver.
//!
//! Every target must have a corpus: a target without one would pass here having replayed
//! nothing. And every target must be replayed: a fuzz target or a corpus that
//! `mcp_fuzz::TARGETS` does not list would be skipped without a word.

use std::collections::BTreeSet;
use std::path::Path;

/// Runs `run` on every file under `dir`, and returns how many there were (none when `dir`
/// does not exist).
fn replay(name: &str, run: fn(&[u8]), dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut replayed = 0;
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        let input = std::fs::read(&path).expect("a corpus file");
        let outcome = std::panic::catch_unwind(|| run(&input));
        assert!(outcome.is_ok(), "{name}: {} fails", path.display());
        replayed += 1;
    }
    replayed
}

#[test]
fn corpus_and_regressions_replay_cleanly() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut without_corpus = Vec::new();
    for (name, run) in mcp_fuzz::TARGETS {
        if replay(name, run, &root.join("corpus").join(name)) == 0 {
            without_corpus.push(name);
        }
        // Saved crashes are optional: most targets never had one.
        replay(name, run, &root.join("regressions").join(name));
    }
    assert!(
        without_corpus.is_empty(),
        "targets with no corpus (corpus/<target>/ missing or empty): {without_corpus:?}"
    );
}

/// The names of the entries of `dir` (a file's without its `.rs`).
fn names(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| {
            let name = entry.expect("a directory entry").file_name();
            let name = name.to_string_lossy();
            name.strip_suffix(".rs").unwrap_or(&name).to_owned()
        })
        .collect()
}

#[test]
fn every_fuzz_target_and_corpus_is_listed_in_targets() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let listed: BTreeSet<String> = mcp_fuzz::TARGETS
        .iter()
        .map(|(name, _)| (*name).to_owned())
        .collect();
    assert_eq!(listed.len(), mcp_fuzz::TARGETS.len(), "a name listed twice");
    for dir in ["fuzz_targets", "corpus", "regressions"] {
        let unlisted: Vec<String> = names(&root.join(dir))
            .difference(&listed)
            .cloned()
            .collect();
        assert!(
            unlisted.is_empty(),
            "{dir}/ has targets that mcp_fuzz::TARGETS does not list, so nothing replays \
             them: {unlisted:?}"
        );
    }
}
