//! Replays every input of the checked-in corpus (`corpus/<target>/`) and every saved
//! crash (`regressions/<target>/`) through its target: what the fuzzer once found stays
//! fixed, on the stable toolchain, without libFuzzer's driver.

use std::path::Path;

#[test]
fn corpus_and_regressions_replay_cleanly() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut replayed = 0;
    for (name, run) in mcp_fuzz::TARGETS {
        for dir in ["corpus", "regressions"] {
            let Ok(entries) = std::fs::read_dir(root.join(dir).join(name)) else {
                continue;
            };
            for entry in entries {
                let path = entry.expect("a directory entry").path();
                let input = std::fs::read(&path).expect("a corpus file");
                let outcome = std::panic::catch_unwind(|| run(&input));
                assert!(outcome.is_ok(), "{name}: {} fails", path.display());
                replayed += 1;
            }
        }
    }
    assert!(replayed > 0, "no corpus found under {}", root.display());
}
