//! `cargo xtask minimal-server`: the README's quick-start server (`examples/minimal-server`)
//! as a new user builds it and as the clients in use meet it.
//!
//! It builds the server in release with plain cargo, in the workspace and as a project of
//! its own made from the README alone, then checks what its users pay: no client or TLS
//! crate in its dependency tree, at most [`MAX_CRATES`] crates, and a stripped binary of at
//! most [`MAX_STRIPPED_BYTES`]. Then the TypeScript SDK v1 client (the initialize
//! handshake, 2025-11-25), the TypeScript SDK v2 client in auto mode (which goes modern,
//! 2026-07-28) and the Python SDK client each list its tools and call `echo` and `add`,
//! over stdio and over Streamable HTTP (`interop/ts-list-call.mjs`,
//! `interop/py-list-call.py`, with the peers `interop/setup.sh` installs).

use std::io::Read as _;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::{cargo, project_root, run_status, target_dir};

/// At most this many crates in the server's tree: the unique lines of
/// `cargo tree -e normal --prefix none`, the server's own package included.
pub(crate) const MAX_CRATES: usize = 110;

/// At most this many bytes of stripped release binary (6 MB).
pub(crate) const MAX_STRIPPED_BYTES: u64 = 6_000_000;

/// Crates a server-only build must not compile: the client and TLS belong to the client
/// role.
const FORBIDDEN: [&str; 5] = [
    "mcp-client",
    "rustls",
    "ring",
    "hyper-rustls",
    "tokio-rustls",
];

/// How long one client run may take, spawn to exit.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(90);

pub(crate) fn run(args: &[String]) -> Result<(), String> {
    if let Some(unknown) = args.first() {
        return Err(format!(
            "minimal-server takes no arguments, got {unknown:?}"
        ));
    }
    let root = project_root();
    let read = |path: &str| {
        std::fs::read_to_string(root.join(path)).map_err(|e| format!("cannot read {path}: {e}"))
    };
    check_readme(
        &read("README.md")?,
        &read("examples/minimal-server/src/main.rs")?,
        &read("examples/minimal-server/Cargo.toml")?,
    )?;
    cargo(&["build", "--release", "-p", "minimal-server"])?;
    let binary = target_dir().join("release/minimal-server");
    check_tree("minimal-server", &["-p", "minimal-server"])?;
    check_size("minimal-server", &binary)?;
    // The same server as a new user makes it, in a project of its own from the README
    // alone: a lockfile of its own, so the newest compatible dependencies.
    let project = readme_project(&read("README.md")?)?;
    let manifest = project.join("Cargo.toml");
    let manifest = manifest.to_string_lossy();
    let select = ["--manifest-path", &*manifest];
    let target = target_dir();
    let target = target.to_string_lossy();
    cargo(
        &[
            &["build", "--release", "--target-dir", &*target][..],
            &select,
        ]
        .concat(),
    )?;
    check_tree("the README's quick start", &select)?;
    check_size(
        "the README's quick start",
        &target_dir().join("release/quick-start"),
    )?;
    run_status(
        Command::new("bash")
            .arg("interop/setup.sh")
            .current_dir(project_root()),
        "bash",
        "interop/setup.sh",
    )?;
    let mut failures = Vec::new();
    for client in Client::ALL {
        for http in [false, true] {
            let what = format!(
                "{} over {}",
                client.name(),
                if http { "HTTP" } else { "stdio" }
            );
            match run_client(client, &binary, http).and_then(|out| check_output(client, &out)) {
                Ok(version) => eprintln!("ok: {what} ({version})"),
                Err(e) => failures.push(format!("{what}: {e}")),
            }
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "the minimal server failed with {} client run(s):\n  {}",
            failures.len(),
            failures.join("\n  ")
        ))
    }
}

/// A project of its own, outside the workspace, made from the README alone: its
/// `Cargo.toml` dependencies block and its quick-start `main.rs`, with the unpublished
/// `mcp` taken from this checkout (`[patch.crates-io]`), as a user of a checkout would.
/// Its directory.
fn readme_project(readme: &str) -> Result<PathBuf, String> {
    let dependencies = fenced_blocks(readme, "toml")
        .find(|block| block.starts_with("[dependencies]") && block.contains("\nmcp = "))
        .ok_or("the README has no `[dependencies]` block with `mcp`")?;
    let main_rs = fenced_blocks(readme, "rust")
        .find(|code| code.contains("mcp::serve_http"))
        .ok_or("the README has no quick-start block that calls mcp::serve_http")?;
    let project = target_dir().join("readme-quick-start");
    let front_door = project_root().join("crates/mcp");
    let manifest = format!(
        "[package]\nname = \"quick-start\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n\
         [workspace]\n\n{dependencies}\n[patch.crates-io]\nmcp = {{ path = {:?} }}\n",
        front_door.to_string_lossy()
    );
    let write = |path: &Path, text: &str| {
        std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
    };
    std::fs::create_dir_all(project.join("src"))
        .map_err(|e| format!("cannot make {}: {e}", project.display()))?;
    write(&project.join("Cargo.toml"), &manifest)?;
    write(&project.join("src/main.rs"), main_rs)?;
    Ok(project)
}

/// The bodies of the README's fenced blocks whose info string starts with `lang`.
fn fenced_blocks<'a>(readme: &'a str, lang: &'a str) -> impl Iterator<Item = &'a str> + 'a {
    readme
        .split("```")
        .skip(1)
        .step_by(2)
        .filter_map(move |block| {
            let (info, body) = block.split_once('\n')?;
            info.starts_with(lang).then_some(body)
        })
}

/// `cargo tree` of a server (`what`, picked by `select`): the crate count, and no client
/// or TLS crate.
fn check_tree(what: &str, select: &[&str]) -> Result<(), String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let output = Command::new(cargo)
        .arg("tree")
        .args(select)
        .args(["-e", "normal", "--prefix", "none"])
        .current_dir(project_root())
        .output()
        .map_err(|e| format!("cannot run cargo tree: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "cargo tree failed: {}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let tree = String::from_utf8_lossy(&output.stdout);
    let tree = Tree::read(&tree);
    eprintln!(
        "{what} depends on {} crates ({} unique lines of cargo tree)",
        tree.crates, tree.lines
    );
    let forbidden: Vec<&str> = FORBIDDEN
        .into_iter()
        .filter(|name| tree.names.iter().any(|n| n == name))
        .collect();
    if !forbidden.is_empty() {
        return Err(format!(
            "a server-only build compiles client code or TLS: {} in the tree of {what}",
            forbidden.join(", ")
        ));
    }
    if tree.lines > MAX_CRATES {
        return Err(format!(
            "{what} depends on {} crates (unique lines of `cargo tree -e normal --prefix \
             none`), more than {MAX_CRATES}",
            tree.lines
        ));
    }
    Ok(())
}

/// What `cargo tree -e normal --prefix none` says about a package.
#[derive(Debug, PartialEq, Eq)]
struct Tree {
    /// Unique lines, as printed: a crate printed both in full and as a repeat (` (*)`)
    /// counts twice, so this is at least [`crates`](Self::crates).
    lines: usize,
    /// Unique crates (name and version).
    crates: usize,
    /// The crates' names.
    names: Vec<String>,
}

impl Tree {
    fn read(tree: &str) -> Tree {
        let mut lines: Vec<&str> = tree.lines().filter(|l| !l.trim().is_empty()).collect();
        lines.sort_unstable();
        lines.dedup();
        let mut crates: Vec<(&str, &str)> = lines
            .iter()
            .filter_map(|line| {
                let mut words = line.split_whitespace();
                Some((words.next()?, words.next().unwrap_or_default()))
            })
            .collect();
        crates.sort_unstable();
        crates.dedup();
        let mut names: Vec<String> = crates.iter().map(|(n, _)| (*n).to_owned()).collect();
        names.dedup();
        Tree {
            lines: lines.len(),
            crates: crates.len(),
            names,
        }
    }
}

/// Strips a copy of the release binary of `what` and checks its size.
fn check_size(what: &str, binary: &Path) -> Result<(), String> {
    let stripped = binary.with_extension("stripped");
    run_status(
        Command::new("strip").arg("-o").arg(&stripped).arg(binary),
        "strip",
        "strip",
    )?;
    let size = std::fs::metadata(&stripped)
        .map_err(|e| format!("cannot read {}: {e}", stripped.display()))?
        .len();
    eprintln!("{what}, release, stripped: {size} bytes");
    if size > MAX_STRIPPED_BYTES {
        return Err(format!(
            "{what}'s stripped release binary is {size} bytes, more than {MAX_STRIPPED_BYTES}"
        ));
    }
    Ok(())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Client {
    TsV1,
    TsV2Auto,
    Python,
}

impl Client {
    const ALL: [Client; 3] = [Client::TsV1, Client::TsV2Auto, Client::Python];

    fn name(self) -> &'static str {
        match self {
            Client::TsV1 => "TypeScript SDK v1",
            Client::TsV2Auto => "TypeScript SDK v2 (auto)",
            Client::Python => "Python SDK",
        }
    }

    /// The protocol version the client must end up speaking, when one is certain.
    fn expected_version(self) -> Option<&'static str> {
        match self {
            Client::TsV1 => Some("2025-11-25"),
            Client::TsV2Auto => Some("2026-07-28"),
            Client::Python => None,
        }
    }

    fn command(self) -> Command {
        let interop = project_root().join("interop");
        match self {
            Client::TsV1 | Client::TsV2Auto => {
                let mut command = Command::new("node");
                command
                    .arg(interop.join("ts-list-call.mjs"))
                    .arg(if self == Client::TsV1 {
                        "v1"
                    } else {
                        "v2-auto"
                    });
                command
            }
            Client::Python => {
                let mut command = Command::new(interop.join(".venv/bin/python"));
                command.arg(interop.join("py-list-call.py"));
                command
            }
        }
    }
}

/// Runs `client` against the server, over HTTP (a server process of its own on a free
/// loopback port) or over stdio (the client spawns it): the client's JSON.
fn run_client(client: Client, binary: &Path, http: bool) -> Result<Value, String> {
    let mut command = client.command();
    let _server = if http {
        let (server, url) = start_http(binary)?;
        command.arg("--url").arg(url);
        Some(server)
    } else {
        command.arg(binary);
        None
    };
    let stdout = run_with_timeout(command.current_dir(project_root().join("interop")))?;
    let line = stdout
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with('{'))
        .ok_or_else(|| format!("the client printed no JSON: {stdout:?}"))?;
    serde_json::from_str(line).map_err(|e| format!("the client printed bad JSON ({e}): {line}"))
}

/// What a client must have seen: the two tools, `echo` echoing and `add` adding, in the
/// version it should speak. `Ok` is the version.
fn check_output(client: Client, out: &Value) -> Result<String, String> {
    if let Some(error) = out.get("error") {
        return Err(format!("the client failed: {error}"));
    }
    let mut tools: Vec<&str> = out["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    tools.sort_unstable();
    if tools != ["add", "echo"] {
        return Err(format!(
            "tools/list gave {}, not add and echo",
            out["tools"]
        ));
    }
    if out["echo"][0]["text"] != "hi" {
        return Err(format!("echo of \"hi\" gave {}", out["echo"]));
    }
    if out["add"][0]["text"] != "5" {
        return Err(format!("add of 2 and 3 gave {}", out["add"]));
    }
    if out["serverName"] != "minimal-server" {
        return Err(format!("the server's name is {}", out["serverName"]));
    }
    let version = out["protocolVersion"].as_str().unwrap_or_default();
    let known = [
        "2026-07-28",
        "2025-11-25",
        "2025-06-18",
        "2025-03-26",
        "2024-11-05",
    ];
    match client.expected_version() {
        Some(expected) if version != expected => {
            Err(format!("the client spoke {version:?}, not {expected}"))
        }
        None if !known.contains(&version) => Err(format!(
            "the client spoke {version:?}, no revision we serve"
        )),
        _ => Ok(version.to_owned()),
    }
}

/// A server process killed when dropped.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts the server on `--http` at a free loopback port: the process and its endpoint's
/// URL, once it accepts connections.
fn start_http(binary: &Path) -> Result<(Server, String), String> {
    let addr: SocketAddr = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_err(|e| format!("no free loopback port: {e}"))?;
    let child = Command::new(binary)
        .arg("--http")
        .arg(addr.to_string())
        .stdin(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", binary.display()))?;
    let mut server = Server(child);
    let deadline = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
        if let Ok(Some(status)) = server.0.try_wait() {
            return Err(format!("the server exited at start ({status})"));
        }
        if Instant::now() > deadline {
            return Err(format!("the server did not listen on {addr} within 10 s"));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok((server, format!("http://{addr}/mcp")))
}

/// Runs `command` to its end within [`CLIENT_TIMEOUT`]: its stdout, or why not.
fn run_with_timeout(command: &mut Command) -> Result<String, String> {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", command.get_program().display()))?;
    let mut stdout = child.stdout.take().ok_or("the client has no stdout")?;
    // Read on a thread, so that a client filling the pipe cannot stall the wait below.
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        stdout.read_to_string(&mut text).map(|_| text)
    });
    let deadline = Instant::now() + CLIENT_TIMEOUT;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() > deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "the client ran past {} s",
                    CLIENT_TIMEOUT.as_secs()
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => return Err(format!("cannot wait for the client: {e}")),
        }
    };
    let text = reader
        .join()
        .map_err(|_| "the reader thread panicked".to_owned())?
        .map_err(|e| format!("cannot read the client's stdout: {e}"))?;
    if status.success() {
        Ok(text)
    } else {
        Err(format!("the client exited with {status}: {text}"))
    }
}

/// The README's quick start is the minimal server, verbatim: the `main.rs` block and the
/// dependency line.
pub(crate) fn check_readme(readme: &str, main_rs: &str, manifest: &str) -> Result<(), String> {
    let block = fenced_blocks(readme, "rust")
        .find(|code| code.contains("mcp::serve_http"))
        .ok_or("the README has no quick-start block that calls mcp::serve_http")?;
    if block != main_rs {
        return Err(
            "the README's quick-start block is not examples/minimal-server/src/main.rs verbatim"
                .to_owned(),
        );
    }
    let dependency = manifest
        .lines()
        .find(|l| l.starts_with("mcp = "))
        .ok_or("examples/minimal-server/Cargo.toml has no `mcp = ` line")?;
    let features = dependency
        .split_once("default-features")
        .map(|(_, rest)| rest)
        .ok_or("the minimal server's `mcp` line sets no default-features")?;
    let readme_line = format!("mcp = {{ version = \"0.2\", default-features{features}");
    if readme.contains(&readme_line) {
        Ok(())
    } else {
        Err(format!(
            "the README does not show the minimal server's dependency line: {readme_line}"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_crate_printed_twice_counts_once_as_a_crate_and_twice_as_a_line() {
        let tree = "minimal-server v0.2.0 (/x)\nmcp v0.2.0 (/y)\nserde v1.0.1\nserde v1.0.1 (*)\n\
                    syn v1.0.0\nsyn v2.0.1\nserde v1.0.1\n";
        let read = Tree::read(tree);
        assert_eq!(read.lines, 6);
        assert_eq!(read.crates, 5);
        assert_eq!(read.names, ["mcp", "minimal-server", "serde", "syn"]);
    }

    #[test]
    fn the_output_of_a_client_is_checked() {
        let good = serde_json::json!({"protocolVersion": "2025-11-25", "serverName": "minimal-server",
            "tools": ["echo", "add"], "echo": [{"type": "text", "text": "hi"}],
            "add": [{"type": "text", "text": "5"}]});
        assert_eq!(check_output(Client::TsV1, &good).unwrap(), "2025-11-25");
        assert!(
            check_output(Client::TsV2Auto, &good).is_err(),
            "v2 auto must go modern"
        );
        assert!(check_output(Client::Python, &good).is_ok());
        let mut wrong_sum = good.clone();
        wrong_sum["add"][0]["text"] = "6".into();
        assert!(check_output(Client::TsV1, &wrong_sum).is_err());
        let mut failed = good.clone();
        failed["error"] = "boom".into();
        assert!(check_output(Client::TsV1, &failed).is_err());
        let mut unknown = good;
        unknown["protocolVersion"] = "1999-01-01".into();
        assert!(check_output(Client::Python, &unknown).is_err());
    }

    #[test]
    fn fenced_blocks_are_found_by_their_language() {
        let readme = "text\n```toml\n[dependencies]\nmcp = 1\n```\nmore\n```rust,no_run\n\
                      fn main() {}\n```\n```sh\nls\n```\n";
        assert_eq!(
            fenced_blocks(readme, "toml").collect::<Vec<_>>(),
            ["[dependencies]\nmcp = 1\n"]
        );
        assert_eq!(
            fenced_blocks(readme, "rust").collect::<Vec<_>>(),
            ["fn main() {}\n"]
        );
        assert_eq!(fenced_blocks(readme, "json").count(), 0);
    }

    /// The README's quick start and `examples/minimal-server` stay one program.
    #[test]
    fn the_readme_quick_start_is_the_minimal_server() {
        let root = project_root();
        let read = |path: &str| std::fs::read_to_string(root.join(path)).unwrap();
        check_readme(
            &read("README.md"),
            &read("examples/minimal-server/src/main.rs"),
            &read("examples/minimal-server/Cargo.toml"),
        )
        .unwrap();
    }
}
