//! The `mcp` tool end to end: the binary run as a user runs it, against the bundled
//! example server over stdio (the default target, a `-- COMMAND`, a config entry) and over
//! Streamable HTTP (`serve-example --http`).

use std::io::{BufRead as _, BufReader};
use std::process::{Command, Output, Stdio};

use mcp_test_support::Killed;
use serde_json::Value;

const MCP: &str = env!("CARGO_BIN_EXE_mcp");

/// An `XDG_CONFIG_HOME` with no `mcp/mcp.json`: the user's own config stays out of the
/// tests.
const NO_USER_CONFIG: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/no-user-config");

fn mcp(args: &[&str]) -> Output {
    mcp_with(args, &[])
}

/// `mcp ARGS` with these environment variables set.
fn mcp_with(args: &[&str], vars: &[(&str, &str)]) -> Output {
    Command::new(MCP)
        .args(args)
        .stdin(Stdio::null())
        .env_remove("MCP_CONFIG")
        .env("XDG_CONFIG_HOME", NO_USER_CONFIG)
        .envs(vars.iter().copied())
        .current_dir(env!("CARGO_TARGET_TMPDIR"))
        .output()
        .expect("mcp runs")
}

/// Writes `config` to `dir/name` under the tests' temporary directory; returns its path.
fn write_config(dir: &str, name: &str, config: &Value) -> String {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, config.to_string()).unwrap();
    path.to_str().unwrap().to_owned()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn with_no_arguments_it_tours_the_example_server() {
    let out = mcp(&[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    for expected in [
        "1. Discover",
        "server    mcp-example",
        "protocol  2026-07-28",
        "2. Tools",
        "echo",
        "add",
        "3. Call a tool",
        "   5\n",
        "4. Read a resource",
        "   144\n",
        "5. Get a prompt",
        "user: Explain MCP tools",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in:\n{text}");
    }
}

#[test]
fn calls_tools_with_key_value_or_json_arguments() {
    let out = mcp(&["call", "add", "a=2", "b=40"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "42\n");

    let out = mcp(&["call", "echo", "--args", r#"{"text": "hi there"}"#]);
    assert_eq!(stdout(&out), "hi there\n");

    let out = mcp(&["--json", "call", "add", "a=1", "b=1"]);
    let json: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(json["content"][0]["text"], "2");
    assert_eq!(json["resultType"], "complete");
}

#[test]
fn failures_are_one_line_and_a_nonzero_exit() {
    // A tool error: its text, then one line on stderr.
    let out = mcp(&["call", "add", "a=1", "b=x"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains("is not of type \"integer\""),
        "{}",
        stdout(&out)
    );
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));

    // A protocol error.
    let out = mcp(&["call", "nope"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("error: ") && err.contains("unknown tool"),
        "{err}"
    );

    // A server that is nowhere.
    let out = mcp(&["tools", "--server", "nosuch"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("no server named \"nosuch\""));

    // Bad arguments.
    let out = mcp(&["call", "add", "novalue"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("is not key=value"));
}

#[test]
fn lists_resources_prompts_and_completions_and_reads() {
    let out = mcp(&["resources"]);
    let text = stdout(&out);
    assert!(text.starts_with("URI"), "{text}");
    assert!(text.contains("example://readme") && text.contains("example://squares/{n}"));

    let out = mcp(&["read", "example://squares/7"]);
    assert_eq!(stdout(&out), "49\n");

    let out = mcp(&["prompts"]);
    assert!(stdout(&out).contains("explain  topic"), "{}", stdout(&out));

    let out = mcp(&["prompt", "explain", "topic=resources"]);
    assert_eq!(
        stdout(&out),
        "user: Explain MCP resources to a newcomer, with one short example.\n"
    );

    let out = mcp(&["complete", "explain", "topic", "t"]);
    assert_eq!(stdout(&out), "tools\ntransports\n");
}

#[test]
fn elicitation_is_declined_without_a_terminal() {
    let out = mcp(&["call", "greet"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Hello, whoever you are.\n");
}

#[test]
fn verbose_shows_the_wire_on_stderr() {
    let out = mcp(&["-v", "call", "echo", "text=wire"]);
    assert_eq!(stdout(&out), "wire\n");
    let err = stderr(&out);
    assert!(err.contains(r#""method":"tools/call""#), "{err}");
    assert!(err.contains("direction=\"received\""), "{err}");
}

#[test]
fn a_stdio_command_after_double_dash_and_a_config_entry() {
    let out = mcp(&["call", "add", "a=3", "b=4", "--", MCP, "serve-example"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "7\n");

    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-config");
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("servers.json");
    let body =
        serde_json::json!({"mcpServers": {"example": {"command": MCP, "args": ["serve-example"]}}});
    std::fs::write(&config, body.to_string()).unwrap();
    let out = mcp(&[
        "discover",
        "--config",
        config.to_str().unwrap(),
        "--server",
        "example",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("server    mcp-example"),
        "{}",
        stdout(&out)
    );
}

/// `mcp serve-example --http`, stopped when dropped.
struct HttpExample {
    _child: Killed,
    url: String,
}

fn http_example() -> HttpExample {
    let (child, url) = mcp_test_support::spawn_url(Command::new(MCP).args([
        "serve-example",
        "--http",
        "127.0.0.1:0",
    ]));
    HttpExample { _child: child, url }
}

#[test]
fn the_example_server_over_http() {
    let server = http_example();
    assert!(
        server.url.starts_with("http://127.0.0.1:"),
        "{}",
        server.url
    );
    let out = mcp(&["call", "add", "a=20", "b=22", "--server", &server.url]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "42\n");
    let out = mcp(&["tools", "--server", &server.url]);
    assert!(stdout(&out).contains("countdown"), "{}", stdout(&out));
}

/// A `"type": "sse"` entry reaches a 2024-11-05 HTTP+SSE server at its SSE URL (the
/// example server serves that transport next to Streamable HTTP).
#[test]
fn an_sse_entry_of_the_config() {
    let server = http_example();
    let sse = server.url.replace("/mcp", "/sse");
    let config = write_config(
        "cli-sse",
        "mcp.json",
        &serde_json::json!({"mcpServers": {"old": {"type": "sse", "url": sse}}}),
    );
    let out = mcp(&[
        "call", "add", "a=1", "b=2", "--config", &config, "-s", "old",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "3\n");
    let out = mcp(&["discover", "--config", &config, "-s", "old", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    // `-e` is for stdio servers: an SSE entry refuses it.
    let out = mcp(&["tools", "--config", &config, "-s", "old", "-e", "A=1"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("-e applies to a stdio server"),
        "{}",
        stderr(&out)
    );
}

/// A legacy stdio server in `sh` that answers `initialize` with 2025-03-26 and every
/// `tools/call` with `hello $GREETING`, and refuses any other request.
const GREETER: &str = r#"
while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
  case "$line" in
    *'"method":"initialize"'*)
      echo "{\"jsonrpc\":\"2.0\",\"id\":$id,\"result\":{\"protocolVersion\":\"2025-03-26\",\"capabilities\":{\"tools\":{}},\"serverInfo\":{\"name\":\"greeter\",\"version\":\"1\"}}}" ;;
    *'"method":"tools/call"'*)
      echo "{\"jsonrpc\":\"2.0\",\"id\":$id,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"hello $GREETING\"}]}}" ;;
    *)
      if [ -n "$id" ]; then
        echo "{\"jsonrpc\":\"2.0\",\"id\":$id,\"error\":{\"code\":-32601,\"message\":\"no\"}}"
      fi ;;
  esac
done
"#;

/// A config entry's `env` (with a `${VAR:-default}` from mcp's own environment), its
/// `protocolVersions`, its `deny` list, and `-e` on top, all reach the server.
#[test]
fn a_config_entry_reaches_its_stdio_server() {
    let config = write_config(
        "cli-entry",
        "mcp.json",
        &serde_json::json!({"mcpServers": {"greeter": {
            "command": "sh",
            "args": ["-c", GREETER],
            "env": {"GREETING": "${WHO:-nobody}"},
            "protocolVersions": ["2025-03-26"],
            "deny": ["forbidden*"]
        }}}),
    );
    let call = |extra: &[&str], vars: &[(&str, &str)]| {
        let mut args = vec!["call", "greet", "--config", &config, "-s", "greeter"];
        args.extend_from_slice(extra);
        mcp_with(&args, vars)
    };
    let out = call(&[], &[("WHO", "ada")]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "hello ada\n");
    let out = call(&[], &[]);
    assert_eq!(stdout(&out), "hello nobody\n", "{}", stderr(&out));
    let out = call(&["-e", "GREETING=grace"], &[("WHO", "ada")]);
    assert_eq!(stdout(&out), "hello grace\n", "{}", stderr(&out));
    // The revision the entry allows, without a probe.
    let out = mcp(&["discover", "--config", &config, "-s", "greeter"]);
    assert!(
        stdout(&out).contains("protocol  2025-03-26"),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    // The deny list.
    let out = mcp(&[
        "call",
        "forbidden_tool",
        "--config",
        &config,
        "-s",
        "greeter",
    ]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("does not allow the tool"),
        "{}",
        stderr(&out)
    );
    // `-e` works on a command after `--` too.
    let out = mcp(&[
        "call",
        "greet",
        "-e",
        "GREETING=linus",
        "--protocol",
        "legacy",
        "--",
        "sh",
        "-c",
        GREETER,
    ]);
    assert_eq!(stdout(&out), "hello linus\n", "{}", stderr(&out));
}

/// Without --config or MCP_CONFIG, `./mcp.json` and then the user's config are read; an
/// unset `${VAR}` stops the command with the server and the variable named.
#[test]
fn the_config_file_is_found_and_checked() {
    let entry = serde_json::json!({"command": MCP, "args": ["serve-example"]});
    let user = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-xdg");
    write_config(
        "cli-xdg/mcp",
        "mcp.json",
        &serde_json::json!({"servers": {"mine": entry}}),
    );
    let out = mcp_with(
        &["call", "add", "a=1", "b=1", "-s", "mine"],
        &[("XDG_CONFIG_HOME", user.to_str().unwrap())],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "2\n");
    // Not found without it.
    let out = mcp(&["call", "add", "a=1", "b=1", "-s", "mine"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("no server named \"mine\""),
        "{}",
        stderr(&out)
    );

    let bad = write_config(
        "cli-unset",
        "mcp.json",
        &serde_json::json!({"mcpServers": {"needs": {"command": MCP, "args": ["--token=${MCP_TEST_UNSET_TOKEN}"]}}}),
    );
    let out = mcp(&["tools", "-s", "needs", "--config", &bad]);
    assert!(!out.status.success());
    let error = stderr(&out);
    assert!(
        error.contains("server `needs`")
            && error.contains("MCP_TEST_UNSET_TOKEN")
            && error.contains("args[0]"),
        "{error}"
    );
    assert_eq!(error.lines().count(), 1, "{error}");
}

/// `serve-example` is a server: its help offers what serving takes, not the benchmark's
/// or the soak's switches (those are `mcp-bench-server`'s) nor the client commands'
/// options. The example server still serves, over HTTP above and over stdio in
/// `a_stdio_command_after_double_dash_and_a_config_entry`.
#[test]
fn serve_example_help_lists_serving_options_only() {
    for help in [
        mcp(&["serve-example", "--help"]),
        mcp(&["help", "serve-example"]),
    ] {
        assert!(help.status.success(), "{}", stderr(&help));
        let text = stdout(&help);
        assert!(text.contains("--http <ADDR>"), "{text}");
        for absent in [
            "--bench-tools",
            "--extra-tools",
            "--soak-tools",
            "--idle-poll",
            "--workers",
            "--max-concurrent-requests",
            "--max-connections",
            "--server",
            "--protocol",
            "--config",
            "--json",
            "--oauth",
            "--no-auth",
            "Authorization",
        ] {
            assert!(!text.contains(absent), "{absent} in:\n{text}");
        }
    }
    // Nor does it take them.
    for args in [
        &["serve-example", "--bench-tools"][..],
        &["serve-example", "--workers", "1"],
        &["serve-example", "--http", "127.0.0.1:0", "--idle-poll", "0"],
        &["serve-example", "--server", "x"],
        &["--json", "serve-example"],
    ] {
        let out = mcp(args);
        assert!(!out.status.success(), "{args:?} was accepted");
    }
}

#[test]
fn listen_follows_a_resource_another_client_changes() {
    let server = http_example();
    let mut listener = Command::new(MCP)
        .args([
            "listen",
            "example://counter",
            "--count",
            "1",
            "--server",
            &server.url,
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    // Wait until the subscription is acknowledged ("listening" on stderr).
    let mut err = BufReader::new(listener.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    assert!(line.starts_with("listening"), "{line}");

    let out = mcp(&["call", "increment", "--server", &server.url]);
    assert_eq!(stdout(&out), "1\n");
    let done = listener.wait_with_output().unwrap();
    assert!(done.status.success());
    assert_eq!(
        String::from_utf8_lossy(&done.stdout),
        "resources/updated example://counter\n"
    );
    let out = mcp(&["read", "example://counter", "--server", &server.url]);
    assert_eq!(stdout(&out), "1\n");
}

#[test]
fn tools_format_prints_each_vendors_declarations() {
    let out = mcp(&["tools", "--format", "openai"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let tools: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(tools[0]["type"], "function");
    assert_eq!(tools[0]["function"]["name"], "mcp-example__echo");
    assert_eq!(
        tools[1]["function"]["parameters"]["required"],
        serde_json::json!(["a", "b"])
    );

    let out = mcp(&["tools", "--format", "anthropic"]);
    let tools: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(tools[1]["name"], "mcp-example__add");
    assert_eq!(
        tools[1]["input_schema"]["properties"]["a"]["type"],
        "integer"
    );

    let out = mcp(&["tools", "--format", "gemini"]);
    let tools: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        tools[0]["functionDeclarations"][0]["name"],
        "mcp-example__echo"
    );

    let out = mcp(&["tools", "--format", "openai-responses"]);
    let tools: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(tools[0]["name"], "mcp-example__echo");
    assert_eq!(tools[0]["strict"], true);

    let out = mcp(&["tools", "--format", "cobol"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("unknown vendor"), "{}", stderr(&out));
}

#[test]
fn tools_format_covers_every_server_of_a_config() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-format");
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("mcp.json");
    let entry = serde_json::json!({"command": MCP, "args": ["serve-example"]});
    let body = serde_json::json!({"mcpServers": {"first": entry, "second": entry}});
    std::fs::write(&config, body.to_string()).unwrap();
    let out = mcp(&[
        "tools",
        "--format",
        "openai",
        "--config",
        config.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let tools: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let names: Vec<&str> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 10, "{names:?}");
    assert_eq!(names[0], "first__echo");
    assert!(names.contains(&"second__increment"), "{names:?}");
}

/// `@modelcontextprotocol/server-everything`, the reference server (legacy revisions
/// only), installed once per test binary by the dual-era client's peer setup.
fn everything() -> String {
    static SETUP: std::sync::Mutex<bool> = std::sync::Mutex::new(false);
    let peers = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../mcp-legacy/tests/peers");
    let mut done = SETUP
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if !*done {
        let status = Command::new("bash")
            .arg(peers.join("setup.sh"))
            .stdout(Stdio::null())
            .status()
            .expect("bash runs");
        assert!(status.success(), "the peers' setup.sh failed");
        *done = true;
    }
    peers
        .join("node_modules/@modelcontextprotocol/server-everything/dist/index.js")
        .display()
        .to_string()
}

#[test]
fn a_third_party_legacy_server_over_stdio() {
    let server = everything();
    let out = mcp(&["discover", "--", "node", &server, "stdio"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("server    mcp-servers/everything"), "{text}");
    assert!(
        text.contains("protocol  2025-11-25"),
        "the handshake era: {text}"
    );

    let out = mcp(&[
        "call", "get-sum", "a=2", "b=3", "--", "node", &server, "stdio",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "The sum of 2 and 3 is 5.\n");

    let out = mcp(&["--json", "tools", "--", "node", &server, "stdio"]);
    let tools: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        names.contains(&"echo") && names.contains(&"get-sum"),
        "{names:?}"
    );

    // Pinned to an older revision, the same server still answers.
    let out = mcp(&[
        "--protocol",
        "2025-06-18",
        "discover",
        "--",
        "node",
        &server,
        "stdio",
    ]);
    assert!(
        stdout(&out).contains("protocol  2025-06-18"),
        "{}",
        stdout(&out)
    );

    let out = mcp(&[
        "tools",
        "--format",
        "anthropic",
        "--",
        "node",
        &server,
        "stdio",
    ]);
    let tools: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert!(
        tools
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "mcp-servers_everything__get-sum"),
        "{tools}"
    );
}

/// Runs `mcp ARGS` on a pseudo-terminal (util-linux `script`); for each `(prompt, input)`
/// of `typing`, waits for the terminal to show `prompt`, then types `input`. Returns what
/// the terminal showed.
fn on_a_terminal(args: &str, typing: &[(&str, &str)]) -> String {
    use std::io::{Read as _, Write as _};
    let mut child = Command::new("script")
        .args(["-qec", &format!("{MCP} {args}"), "/dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env_remove("MCP_CONFIG")
        .env("XDG_CONFIG_HOME", NO_USER_CONFIG)
        .current_dir(env!("CARGO_TARGET_TMPDIR"))
        .spawn()
        .expect("util-linux `script` runs");
    let mut terminal = child.stdout.take().unwrap();
    let (shown, screen_rx) = std::sync::mpsc::channel::<Vec<u8>>();
    let reader = std::thread::spawn(move || {
        let mut chunk = [0; 4096];
        while let Ok(n @ 1..) = terminal.read(&mut chunk) {
            if shown.send(chunk[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    let mut screen = Vec::new();
    let mut stdin = child.stdin.take().unwrap();
    for (prompt, input) in typing {
        // Typed once the question is on the screen, not after a guessed moment: a loaded
        // machine may take longer than any guess to start the program and ask.
        let deadline = std::time::Instant::now() + std::time::Duration::from_mins(1);
        while !String::from_utf8_lossy(&screen).contains(prompt) {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let chunk = screen_rx.recv_timeout(left).unwrap_or_else(|_| {
                panic!(
                    "the terminal did not show {prompt:?}: {:?}",
                    String::from_utf8_lossy(&screen)
                )
            });
            screen.extend(chunk);
        }
        stdin.write_all(input.as_bytes()).unwrap();
        stdin.flush().unwrap();
    }
    drop(stdin);
    // The reader ends at the end of the terminal's output, and with it the channel.
    screen.extend(screen_rx.iter().flatten());
    reader.join().unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&screen).replace('\r', "")
}

#[test]
fn elicitation_is_asked_at_a_terminal() {
    let screen = on_a_terminal("call greet", &[("Your name (string): ", "Ada\n")]);
    assert!(screen.contains("? What is your name?"), "{screen:?}");
    assert!(screen.contains("Your name (string): "), "{screen:?}");
    assert!(screen.contains("Hello, Ada!"), "{screen:?}");
}

#[test]
fn progress_is_a_bar_at_a_terminal() {
    let screen = on_a_terminal("call countdown seconds=2", &[]);
    assert!(
        screen.contains("[..............................]   0% 2 s left"),
        "{screen:?}"
    );
    assert!(
        screen.contains("[###############...............]  50% 1 s left"),
        "{screen:?}"
    );
    assert!(screen.contains("100% done"), "{screen:?}");
    assert!(screen.contains("Counted down 2 s"), "{screen:?}");
}

/// std's start-up ignores SIGPIPE before `main`: a server whose client has closed its end
/// of the server's stdout gets `EPIPE` on its next write and ends on its own, rather than
/// being killed by the signal.
#[cfg(unix)]
#[test]
fn a_closed_stdout_is_an_error_not_a_fatal_signal() {
    use std::io::Write as _;
    use std::os::unix::process::ExitStatusExt as _;
    let mut server = Command::new(MCP)
        .arg("serve-example")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // The read end of the server's stdout goes away before the server writes anything.
    drop(server.stdout.take());
    let mut stdin = server.stdin.take().unwrap();
    let request = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    for _ in 0..3 {
        // A write can fail once the server is gone; the status below is what counts.
        let _ = writeln!(stdin, "{request}");
        let _ = stdin.flush();
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    drop(stdin);
    let status = server.wait().unwrap();
    assert_eq!(status.signal(), None, "killed by a signal: {status}");
}

/// The status line of `GET path` to the server at `url`'s address.
fn status_of(url: &str, path: &str) -> String {
    use std::io::{Read as _, Write as _};
    let addr = url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_owned();
    let Ok(mut stream) = std::net::TcpStream::connect(&addr) else {
        return "refused".to_owned();
    };
    let _ = write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    );
    let mut reply = String::new();
    let _ = stream.read_to_string(&mut reply);
    reply.lines().next().unwrap_or("closed").to_owned()
}

#[test]
fn sigterm_turns_the_http_server_unready_then_stops_it() {
    let mut child = Command::new(MCP)
        .args([
            "serve-example",
            "--http",
            "127.0.0.1:0",
            "--drain",
            "2",
            "--grace",
            "1",
        ])
        .stdout(Stdio::piped())
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let mut url = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut url)
        .unwrap();
    let url = url.trim().to_owned();
    assert_eq!(status_of(&url, "/readyz"), "HTTP/1.1 200 OK");
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    // Within the drain: unready, still alive, still serving.
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert_eq!(
        status_of(&url, "/readyz"),
        "HTTP/1.1 503 Service Unavailable"
    );
    assert_eq!(status_of(&url, "/healthz"), "HTTP/1.1 200 OK");
    let out = mcp(&["call", "add", "a=1", "b=2", "--server", &url]);
    assert_eq!(stdout(&out), "3\n", "{}", stderr(&out));
    // Then it exits, cleanly.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(std::time::Instant::now() < deadline, "still running");
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert!(status.success(), "{status:?}");
}
