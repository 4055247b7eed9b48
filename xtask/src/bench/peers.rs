//! The SDK peers of `cargo xtask bench`: the TypeScript and Python SDK servers, installed
//! pinned (`bench/ts-server/package.json`, `bench/py-server/requirements.txt`) when missing
//! or out of date.

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

use super::{Driver, Era, Role, ServerSpec, Url};

/// The TypeScript and Python SDK servers, installed pinned when missing or out of date.
/// A peer that cannot be run (no node or python, a failed install) is left out, with the
/// reason in `skipped`.
pub(super) fn sdk_peers(work: &Path, skipped: &mut Vec<String>) -> Vec<ServerSpec> {
    let bench = crate::project_root().join("bench");
    let mut peers = Vec::new();
    for (name, peer) in [
        (
            "the TypeScript SDK server",
            ts_peer(&bench.join("ts-server")),
        ),
        (
            "the Python SDK server",
            py_peer(&bench.join("py-server"), &work.join("py-venv")),
        ),
    ] {
        match peer {
            Ok(spec) => peers.push(spec),
            Err(why) => {
                eprintln!("skipping {name}: {why}");
                skipped.push(format!("{name}: {why}"));
            }
        }
    }
    peers
}

/// The first line a program prints for `--version`, or why it cannot run.
fn tool_version(program: &str, install: &str) -> Result<String, String> {
    let output = Command::new(program)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("`{program}` cannot run ({e}); {install}"))?;
    if !output.status.success() {
        return Err(format!(
            "`{program} --version` failed ({}); {install}",
            output.status
        ));
    }
    let text = String::from_utf8_lossy(&output.stdout);
    let text = if text.trim().is_empty() {
        String::from_utf8_lossy(&output.stderr).into_owned()
    } else {
        text.into_owned()
    };
    Ok(text.lines().next().unwrap_or_default().trim().to_owned())
}

/// Runs an install step in `dir`, its output on stderr.
fn install(dir: &Path, program: &str, args: &[&str]) -> Result<(), String> {
    eprintln!("$ (cd {}; {program} {})", dir.display(), args.join(" "));
    let status = Command::new(program)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::inherit())
        .stderr(Stdio::inherit())
        .status()
        .map_err(|e| format!("cannot run {program}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{program} {}` failed ({status})", args.join(" ")))
    }
}

/// Whether `installed` is missing or older than `pins`.
fn out_of_date(pins: &Path, installed: &Path) -> bool {
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    match (modified(pins), modified(installed)) {
        (Some(pins), Some(installed)) => installed < pins,
        _ => true,
    }
}

/// The exact version `package.json` pins for `package`, or `None` when it is a range.
fn pinned_npm(package_json: &str, package: &str) -> Option<String> {
    let manifest: Value = serde_json::from_str(package_json).ok()?;
    let version = manifest["dependencies"][package].as_str()?;
    version
        .chars()
        .all(|c| c.is_ascii_digit() || c == '.')
        .then(|| version.to_owned())
}

/// The exact version `requirements.txt` pins for `package` (`package==X`).
fn pinned_pip(requirements: &str, package: &str) -> Option<String> {
    requirements.lines().find_map(|line| {
        let line = line.split('#').next()?.trim();
        let (name, version) = line.split_once("==")?;
        (name.trim() == package).then(|| version.trim().to_owned())
    })
}

/// The TypeScript SDK server (`bench/ts-server`), after `npm ci` when needed.
fn ts_peer(dir: &Path) -> Result<ServerSpec, String> {
    let how = "install Node.js 20 or later with npm to measure it";
    let node = tool_version("node", how)?;
    tool_version("npm", how)?;
    let manifest = std::fs::read_to_string(dir.join("package.json"))
        .map_err(|e| format!("cannot read {}/package.json: {e}", dir.display()))?;
    let version = pinned_npm(&manifest, "@modelcontextprotocol/sdk")
        .ok_or("package.json does not pin @modelcontextprotocol/sdk to one version")?;
    if out_of_date(
        &dir.join("package-lock.json"),
        &dir.join("node_modules/.package-lock.json"),
    ) {
        install(dir, "npm", &["ci", "--no-audit", "--no-fund"])?;
    }
    Ok(script_peer(
        format!("TypeScript SDK {version} (Node {node}; legacy era; HTTP stateless JSON)"),
        // @modelcontextprotocol/sdk 1.x speaks the initialize era (up to 2025-11-25).
        Era::Legacy,
        "node".to_owned(),
        dir.join("server.mjs").display().to_string(),
    ))
}

/// Another SDK's server, a script that `interpreter` runs: on stdio by itself, over HTTP
/// with `--http 127.0.0.1:0` (and `--sse` for progress), with the bench tools built in.
fn script_peer(name: String, era: Era, interpreter: String, script: String) -> ServerSpec {
    ServerSpec {
        name,
        role: Role::Other,
        driver: Driver::McpLoad,
        era,
        stdio: Some(vec![interpreter.clone(), script.clone()]),
        http: Some(vec![
            interpreter,
            script,
            "--http".to_owned(),
            "127.0.0.1:0".to_owned(),
        ]),
        url: Url::Printed,
        echo: true,
        tools: true,
        tools_args: &[],
        progress_http: &["--sse"],
    }
}

/// The Python SDK server (`bench/py-server`) in its own venv, made when needed.
fn py_peer(dir: &Path, venv: &Path) -> Result<ServerSpec, String> {
    let how = "install Python 3.10 or later with venv to measure it";
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_owned());
    let python_version = tool_version(&python, how)?;
    let requirements_path = dir.join("requirements.txt");
    let requirements = std::fs::read_to_string(&requirements_path)
        .map_err(|e| format!("cannot read {}: {e}", requirements_path.display()))?;
    let version = pinned_pip(&requirements, "mcp")
        .ok_or("requirements.txt does not pin mcp to one version")?;
    let venv_python = venv.join("bin/python");
    let stamp = venv.join(".requirements.installed");
    let installed = std::fs::read_to_string(&stamp).unwrap_or_default();
    if !venv_python.is_file() || installed != requirements {
        if venv.exists() {
            std::fs::remove_dir_all(venv)
                .map_err(|e| format!("cannot remove {}: {e}", venv.display()))?;
        }
        let venv_arg = venv.display().to_string();
        install(dir, &python, &["-m", "venv", &venv_arg])?;
        let requirements_arg = requirements_path.display().to_string();
        install(
            dir,
            &venv_python.display().to_string(),
            &[
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "-r",
                &requirements_arg,
            ],
        )?;
        std::fs::write(&stamp, &requirements)
            .map_err(|e| format!("cannot write {}: {e}", stamp.display()))?;
    }
    Ok(script_peer(
        format!("Python SDK {version} ({python_version}; HTTP stateless JSON)"),
        // mcp 2.x serves 2026-07-28 to a client that sends the `_meta` envelope, and the
        // 2025 era to one that sends `initialize`: it takes part in both.
        Era::Modern,
        venv_python.display().to_string(),
        dir.join("server.py").display().to_string(),
    ))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn pins() {
        let manifest =
            r#"{"dependencies": {"@modelcontextprotocol/sdk": "1.32.2", "zod": "^4.2.1"}}"#;
        assert_eq!(
            pinned_npm(manifest, "@modelcontextprotocol/sdk").as_deref(),
            Some("1.32.2")
        );
        assert_eq!(pinned_npm(manifest, "zod"), None);
        assert_eq!(pinned_npm(manifest, "other"), None);
        assert_eq!(pinned_npm("not json", "zod"), None);
        let requirements = "# pins\nanyio>=4\nmcp==2.3.0  # the SDK\nmcp-extra==1\n";
        assert_eq!(pinned_pip(requirements, "mcp").as_deref(), Some("2.3.0"));
        assert_eq!(pinned_pip(requirements, "anyio"), None);
        assert_eq!(pinned_pip("", "mcp"), None);
        let own =
            std::fs::read_to_string(crate::project_root().join("bench/py-server/requirements.txt"))
                .unwrap();
        assert!(pinned_pip(&own, "mcp").is_some(), "{own}");
        let own =
            std::fs::read_to_string(crate::project_root().join("bench/ts-server/package.json"))
                .unwrap();
        assert!(
            pinned_npm(&own, "@modelcontextprotocol/sdk").is_some(),
            "{own}"
        );
    }

    #[test]
    fn installs_go_stale() {
        let dir = std::env::temp_dir().join(format!("xtask-bench-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (pins, installed) = (dir.join("pins"), dir.join("installed"));
        std::fs::write(&pins, "1").unwrap();
        assert!(out_of_date(&pins, &installed), "nothing installed");
        std::thread::sleep(Duration::from_millis(20));
        std::fs::write(&installed, "1").unwrap();
        assert!(!out_of_date(&pins, &installed));
        std::thread::sleep(Duration::from_millis(20));
        std::fs::write(&pins, "2").unwrap();
        assert!(out_of_date(&pins, &installed), "pins changed");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
