//! `cargo xtask hot-symbols`: the functions `mcp serve-example` runs while it serves,
//! written to `crates/mcp-cli/hot-symbols.txt`, the order in which `mcp-cli`'s build
//! script asks the linker to lay them out first (issue #8, `docs/PERFORMANCE.md`,
//! "Resident size").
//!
//! Without an order, the few thousand functions a server runs lie scattered over 18 MB of
//! code, and the kernel maps the binary in 64 KiB runs around each page touched: a server
//! that runs 1 MB of code kept 7 MB of it resident. Laid out together they fill about one
//! megabyte.
//!
//! The list comes from `valgrind --tool=callgrind --demangle=no`: the release build of
//! `mcp serve-example --bench-tools` is run under it over stdio and over HTTP while
//! `mcp-load` (the benchmark's driver, `bench/`) sends it the benchmark's calls (the small
//! and 64 KiB echo, the schema-validated `search`, `steps` with progress over SSE, a
//! `tools/list`), and every function of the `mcp` binary that ran is listed, the most
//! instructions first. The names are the linker's symbols; those of generic functions
//! carry a hash of their type arguments, so a change to the code can rename some of them,
//! and a name the binary no longer has is ignored by the linker (it then goes where it
//! would have gone anyway). Run this again after a large change; `--check` only counts how
//! many of the listed names the current release build still has.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// Where the list goes, from the workspace root.
const LIST: &str = "crates/mcp-cli/hot-symbols.txt";

/// Runs the command: `args` are what follows `hot-symbols`.
pub(crate) fn run(args: &[String]) -> Result<(), String> {
    let check = match args {
        [] => false,
        [flag] if flag == "--check" => true,
        _ => return Err("usage: cargo xtask hot-symbols [--check]".to_owned()),
    };
    let mcp = crate::build_mcp_release()?;
    let list_path = crate::project_root().join(LIST);
    if check {
        let list = std::fs::read_to_string(&list_path)
            .map_err(|e| format!("{}: {e}", list_path.display()))?;
        let symbols = binary_symbols(&mcp)?;
        let names: Vec<&str> = list.lines().filter(|l| !l.is_empty()).collect();
        let present = names.iter().filter(|n| symbols.contains(**n)).count();
        println!(
            "{present} of the {} functions listed in {LIST} are in {}",
            names.len(),
            mcp.display()
        );
        return Ok(());
    }
    if Command::new("valgrind").arg("--version").output().is_err() {
        return Err("valgrind is not installed (Debian's package `valgrind`)".to_owned());
    }
    crate::cargo(&[
        "build",
        "--release",
        "--manifest-path",
        "bench/Cargo.toml",
        "-p",
        "mcp-load",
    ])?;
    let load = match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => crate::project_root().join(dir),
        None => crate::project_root().join("bench/target"),
    }
    .join("release/mcp-load");
    let work = crate::target_dir().join("hot-symbols");
    std::fs::create_dir_all(&work).map_err(|e| format!("{}: {e}", work.display()))?;
    let object = std::fs::canonicalize(&mcp).map_err(|e| format!("{}: {e}", mcp.display()))?;

    let object = object.display().to_string();
    let mut tiers = Vec::new();
    for (t, tier) in TIERS.iter().enumerate() {
        let mut costs = HashMap::new();
        for profile in profile_tier(&mcp, &load, &work.join(format!("tier{t}")), tier)? {
            self_costs(&read_profile(&profile)?, &object, &mut costs);
        }
        tiers.push(costs);
    }
    let names: Vec<String> = C_RUNTIME
        .iter()
        .map(|name| (*name).to_owned())
        .chain(
            ordered(tiers)
                .into_iter()
                .filter(|name| !C_RUNTIME.contains(&name.as_str())),
        )
        .collect();
    let mut text = names.join("\n");
    text.push('\n');
    std::fs::write(&list_path, text).map_err(|e| format!("{}: {e}", list_path.display()))?;
    println!("{} functions written to {LIST}", names.len());
    Ok(())
}

/// Runs one tier's workloads against `mcp serve-example` under callgrind; gives the
/// profiles written (over stdio `mcp-load` spawns a server per workload, over HTTP one
/// server takes them all and is stopped with SIGTERM so that callgrind writes its file).
fn profile_tier(
    mcp: &Path,
    load: &Path,
    out: &Path,
    tier: &Tier,
) -> Result<Vec<std::path::PathBuf>, String> {
    let under_callgrind = |file: &Path| -> Vec<String> {
        let mut command = vec![
            "valgrind".to_owned(),
            "--tool=callgrind".to_owned(),
            "--demangle=no".to_owned(),
            "-q".to_owned(),
            format!("--callgrind-out-file={}", file.display()),
            mcp.display().to_string(),
            "serve-example".to_owned(),
        ];
        command.extend(tier.serve.iter().map(|s| (*s).to_owned()));
        command
    };
    if !tier.http {
        let mut profiles = Vec::new();
        for (i, workload) in tier.workloads.iter().enumerate() {
            let file = out.with_extension(format!("{i}.callgrind"));
            let mut args = workload_args(workload);
            args.extend(["--stdio".to_owned(), "--".to_owned()]);
            args.extend(under_callgrind(&file));
            drive(load, &args)?;
            profiles.push(file);
        }
        return Ok(profiles);
    }
    let file = out.with_extension("callgrind");
    let mut command = under_callgrind(&file);
    command.extend(["--http".to_owned(), "127.0.0.1:0".to_owned()]);
    let (mut server, url) = crate::bench::start_http(&command)?;
    let pid = server.0.id().to_string();
    for workload in tier.workloads {
        let mut args = workload_args(workload);
        args.extend([
            "--http".to_owned(),
            url.clone(),
            "--pid".to_owned(),
            pid.clone(),
        ]);
        drive(load, &args)?;
    }
    let _ = Command::new("kill").args(["-TERM", &pid]).status();
    let deadline = Instant::now() + Duration::from_mins(1);
    while server.0.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(vec![file])
}

/// The C runtime's start-up code in `.text` (from `crt1.o` and `crtbegin.o`), which every
/// process runs before `main` and callgrind does not name as the binary's: listed first,
/// or LLD leaves it after the ordered functions, megabytes away, where it kept two
/// 64 KiB runs of code resident.
const C_RUNTIME: [&str; 5] = [
    "_start",
    "frame_dummy",
    "register_tm_clones",
    "deregister_tm_clones",
    "__do_global_dtors_aux",
];

/// One `mcp-load` run: how many calls, and its options before the transport's.
struct Workload {
    calls: usize,
    options: &'static [&'static str],
}

/// A group of runs whose functions are listed together, after those of the tiers
/// before it.
struct Tier {
    http: bool,
    /// `mcp serve-example`'s options beyond the transport.
    serve: &'static [&'static str],
    workloads: &'static [Workload],
}

const SMALL: Workload = Workload {
    calls: 2000,
    options: &[],
};
const LARGE: Workload = Workload {
    calls: 50,
    options: &["--payload", "65536"],
};
const SEARCH: Workload = Workload {
    calls: 200,
    options: &[
        "--tool",
        "search",
        "--arguments",
        crate::bench::SEARCH_ARGUMENTS,
    ],
};
const TOOLS_LIST: Workload = Workload {
    calls: 50,
    options: &["--method", "tools/list", "--expect-tools", "2"],
};
/// Over HTTP only: the progress notifications come as SSE events there.
const PROGRESS: Workload = Workload {
    calls: 200,
    options: &[
        "--tool",
        "steps",
        "--arguments",
        r#"{"steps":10}"#,
        "--progress",
        "10",
    ],
};

/// In the order the benchmark's figures weigh them: the plain server's small echo over
/// stdio (the run whose resident size the table reports), the 64 KiB echo's other
/// functions, the same two over HTTP, then the tool scenarios. Each tier's functions go
/// after those of the tiers before it, so that a small-echo server touches one run of
/// code.
const TIERS: [Tier; 6] = [
    Tier {
        http: false,
        serve: &[],
        workloads: &[SMALL],
    },
    Tier {
        http: false,
        serve: &[],
        workloads: &[LARGE],
    },
    Tier {
        http: true,
        serve: &[],
        workloads: &[SMALL],
    },
    Tier {
        http: true,
        serve: &[],
        workloads: &[LARGE],
    },
    Tier {
        http: false,
        serve: &["--bench-tools"],
        workloads: &[SEARCH, TOOLS_LIST],
    },
    Tier {
        http: true,
        serve: &["--bench-tools"],
        workloads: &[SEARCH, TOOLS_LIST, PROGRESS],
    },
];

fn workload_args(workload: &Workload) -> Vec<String> {
    let mut args: Vec<String> = [
        "--in-flight",
        "16",
        "--warmup",
        "0",
        "--calls",
        &workload.calls.to_string(),
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    args.extend(workload.options.iter().map(|s| (*s).to_owned()));
    args
}

/// Runs `mcp-load` to the end (the benchmark's runner, with a bound: callgrind is about 50
/// times slower than the server alone); its report is not needed, only that it succeeded.
fn drive(load: &Path, args: &[String]) -> Result<(), String> {
    eprintln!("$ mcp-load {}", args.join(" "));
    crate::bench::run_with_timeout(load, "mcp-load", args, Duration::from_mins(10)).map(drop)
}

/// Adds each function's own instructions (its self cost) in one callgrind profile to
/// `costs`, for the functions of `object` only. The format
/// (<https://valgrind.org/docs/manual/cl-format.html>): `ob=`, `fn=` set the current
/// object and function, `cob=`, `cfn=` name a callee, every name may be given once as
/// `(id) name` and then as `(id)` alone, and the cost line after a `calls=` line is the
/// call's inclusive cost, not the caller's own.
fn self_costs(text: &str, object: &str, costs: &mut HashMap<String, u64>) {
    let mut objects: HashMap<&str, &str> = HashMap::new();
    let mut functions: HashMap<&str, &str> = HashMap::new();
    let mut current: Option<&str> = None;
    let mut in_object = false;
    let mut after_call = false;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("ob=") {
            in_object = name(rest, &mut objects) == Some(object);
        } else if let Some(rest) = line.strip_prefix("cob=") {
            name(rest, &mut objects);
        } else if let Some(rest) = line.strip_prefix("fn=") {
            current = name(rest, &mut functions);
        } else if let Some(rest) = line.strip_prefix("cfn=") {
            name(rest, &mut functions);
        } else if line.starts_with("calls=") {
            after_call = true;
        } else if line.starts_with(|c: char| c.is_ascii_digit() || matches!(c, '+' | '-' | '*')) {
            if std::mem::take(&mut after_call) {
                continue;
            }
            let cost = line
                .split_whitespace()
                .nth(1)
                .and_then(|c| c.parse::<u64>().ok());
            if let (true, Some(function), Some(cost)) = (in_object, current, cost) {
                // A recursive call's frames are `name'2` and deeper: the same symbol.
                let symbol = function
                    .split_once('\'')
                    .map_or(function, |(symbol, _)| symbol);
                *costs.entry(symbol.to_owned()).or_insert(0) += cost;
            }
        }
    }
}

/// A compressed name, `(id) name` (defining it) or `(id)` (using it); a name given
/// without an id is itself.
fn name<'a>(field: &'a str, names: &mut HashMap<&'a str, &'a str>) -> Option<&'a str> {
    let Some(rest) = field.strip_prefix('(') else {
        return Some(field);
    };
    let (id, tail) = rest.split_once(')')?;
    match tail.strip_prefix(' ') {
        Some(defined) => {
            names.insert(id, defined);
            Some(defined)
        }
        None => names.get(id).copied(),
    }
}

/// The names, tier by tier: each tier's functions not listed before it, the most
/// instructions first (ties by name, so the file is stable). A process of an early tier
/// then touches one run of code, not every page it shares with the functions of later
/// tiers. Addresses callgrind could not name are left out.
fn ordered(tiers: Vec<HashMap<String, u64>>) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let mut listed: HashSet<String> = HashSet::new();
    for costs in tiers {
        let mut tier: Vec<(String, u64)> = costs
            .into_iter()
            .filter(|(name, _)| !name.starts_with("0x") && !listed.contains(name))
            .collect();
        tier.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        for (name, _) in tier {
            listed.insert(name.clone());
            names.push(name);
        }
    }
    names
}

fn read_profile(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path)
        .map_err(|e| format!("{}: {e} (did callgrind finish?)", path.display()))
}

/// The function symbols of a binary, from `nm`.
fn binary_symbols(binary: &Path) -> Result<HashSet<String>, String> {
    let output = Command::new("nm")
        .arg(binary)
        .output()
        .map_err(|e| format!("cannot run nm: {e}"))?;
    Ok(String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.split_whitespace().last())
        .map(str::to_owned)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROFILE: &str = "\
version: 1
events: Ir
ob=(1) /bin/mcp
fl=(1) src/main.rs
fn=(1) _ZN3mcp4main17h0000000000000001E
1 10
+2 5
cob=(2) /lib/libc.so.6
cfn=(2) memcpy
calls=1 0
3 1000
ob=(2)
fn=(2)
0 40
ob=(1)
fn=(3) _ZN3mcp3hot17h0000000000000002E
4 700
fn=(1)
5 1
fn=(4) _ZN3mcp3hot17h0000000000000002E'2
6 3
";

    #[test]
    fn self_costs_count_a_functions_own_lines_of_its_object_only() {
        let mut costs = HashMap::new();
        self_costs(PROFILE, "/bin/mcp", &mut costs);
        assert_eq!(costs.get("_ZN3mcp4main17h0000000000000001E"), Some(&16));
        assert_eq!(costs.get("_ZN3mcp3hot17h0000000000000002E"), Some(&703));
        assert_eq!(costs.get("memcpy"), None, "libc's functions are not ours");
        let http = HashMap::from([
            ("_ZN3mcp4main17h0000000000000001E".to_owned(), 5000),
            ("_ZN3mcp4http17h0000000000000003E".to_owned(), 1),
            ("_ZN3mcp5hyper17h0000000000000004E".to_owned(), 2),
        ]);
        assert_eq!(
            ordered(vec![costs, http]),
            [
                "_ZN3mcp3hot17h0000000000000002E",
                "_ZN3mcp4main17h0000000000000001E",
                "_ZN3mcp5hyper17h0000000000000004E",
                "_ZN3mcp4http17h0000000000000003E",
            ],
            "the first tier's functions first, then the next tier's others, each by cost"
        );
    }

    #[test]
    fn compressed_names_are_remembered_per_id() {
        let mut names = HashMap::new();
        assert_eq!(name("(7) f", &mut names), Some("f"));
        assert_eq!(name("(7)", &mut names), Some("f"));
        assert_eq!(name("(8)", &mut names), None);
        assert_eq!(name("plain", &mut names), Some("plain"));
    }
}
