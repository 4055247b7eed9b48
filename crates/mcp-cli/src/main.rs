//! `mcp`: talk to any MCP server from a terminal or a script.
//!
//! ```text
//! mcp                                  a guided tour of the bundled example server
//! mcp tools                            the example server's tools
//! mcp call add a=2 b=3                 call a tool (key=value, or --args JSON)
//! mcp tools --server https://host/mcp  any Streamable HTTP server
//! mcp tools -- npx -y @modelcontextprotocol/server-everything
//! mcp tools --server files             a server named in the config file (docs/CONFIG.md)
//! mcp serve-example [--http ADDR]      run the example server
//! mcp gateway [--http ADDR]            serve every server of the config file as one
//! ```
//!
//! Every command prints readable text, or the protocol's JSON with `--json`. `--verbose`
//! shows every JSON-RPC message on stderr. An error is one line on stderr and exit code 1.

#![forbid(unsafe_code)]

/// The opt-in `mimalloc` feature (see Cargo.toml); the system allocator otherwise.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod example;
mod interact;
mod oauth;
mod output;
mod target;
mod tour;

use std::fmt::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use mcp_client::{CallOptions, Client, ListenEvent};
use mcp_legacy::client::EraChoice;
use serde_json::{Map, Value, json};

use crate::target::{Overrides, Session, Target};

/// What went wrong, in one line.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Error {
    /// The server answered with an error, or could not be reached.
    #[error("{0}")]
    Client(#[from] mcp_client::Error),
    /// The server could not be reached, or its era could not be settled.
    #[error("{0}")]
    Connect(#[from] mcp_legacy::Error),
    /// The gateway could not start.
    #[error("{0}")]
    Gateway(mcp_host::Error),
    /// The config file could not be read or is not valid.
    #[error("{path}: {source}")]
    Config {
        path: PathBuf,
        source: mcp_host::Error,
    },
    #[error("no server named {name:?} in the config{}", known_list(.known))]
    UnknownServer { name: String, known: Vec<String> },
    /// The config entry's `allow` / `deny` lists keep the tool from being called.
    #[error(
        "the config of {server:?} does not allow the tool {tool:?} (see its allow and deny lists)"
    )]
    NotAllowed { server: String, tool: String },
    #[error("cannot find this program's own path to run the example server: {0}")]
    CurrentExe(std::io::Error),
    #[error("bad arguments: {0}")]
    Arguments(String),
    #[error("the example server: {0}")]
    Server(#[from] mcp_server::Error),
    /// Serving over HTTP failed. Not `#[from]`: `?` turns an `mcp_legacy::Error` into
    /// `Connect`, so a serve failure is wrapped by name where it happens.
    #[error("cannot serve over HTTP: {0}")]
    Serve(mcp_legacy::Error),
    #[error("the tool reported an error")]
    ToolFailed,
    #[error("cannot write the output: {0}")]
    Json(#[from] serde_json::Error),
    #[error("{0}")]
    Host(#[from] mcp_host::Error),
}

fn known_list(known: &[String]) -> String {
    if known.is_empty() {
        " (no config file found: pass --config FILE, set MCP_CONFIG, or create ./mcp.json \
         or ~/.config/mcp/mcp.json)"
            .to_owned()
    } else {
        format!(" (known: {})", known.join(", "))
    }
}

#[derive(Parser)]
#[command(
    name = "mcp",
    version,
    about = "Talk to MCP servers: discover, list, call, read, prompt, listen.",
    long_about = "Talk to MCP servers: discover, list, call, read, prompt, listen.\n\n\
                  With no command, a guided tour of the bundled example server. Without \
                  --server or `-- COMMAND`, commands go to that example server too."
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Show every JSON-RPC message on stderr.
    #[arg(long, short, global = true)]
    verbose: bool,
    /// The client options given before the command's name (`mcp --json tools`).
    #[command(flatten)]
    client: ClientArgs,
}

/// The options of the commands that talk to a server, accepted before the command's name
/// and after it. Not global: `serve-example` is a server, and its help lists only what
/// serving takes.
#[derive(Args, Default, Clone, PartialEq, Eq)]
struct ClientArgs {
    /// Print the protocol's JSON instead of readable text.
    #[arg(long)]
    json: bool,
    /// The config file (default: $MCP_CONFIG, then ./mcp.json, then
    /// $XDG_CONFIG_HOME/mcp/mcp.json or ~/.config/mcp/mcp.json; see docs/CONFIG.md).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// The server: an http(s) URL, or a name from the config file.
    #[arg(long, short, value_name = "URL|NAME")]
    server: Option<String>,
    /// The protocol: `detect` (the default: probe the server, then fall back to the
    /// initialize handshake), `modern`, `legacy`, or a revision such as 2025-06-18.
    #[arg(long, value_name = "ERA")]
    protocol: Option<String>,
    /// An environment variable for a stdio server (`-- COMMAND` or a config entry), on
    /// top of the entry's `env`. Repeatable.
    #[arg(short = 'e', long = "env", value_name = "KEY=VAL")]
    env: Vec<String>,
    /// A header for an HTTP server (a URL or a config entry), instead of the entry's
    /// header of that name. Repeatable.
    #[arg(short = 'H', long = "header", value_name = "NAME:VALUE")]
    header: Vec<String>,
    #[command(flatten)]
    oauth: oauth::OAuthArgs,
}

impl ClientArgs {
    /// These options, each one not given taken from `before` (the options given before
    /// the command's name).
    fn or(self, before: Self) -> Self {
        Self {
            json: self.json || before.json,
            config: self.config.or(before.config),
            server: self.server.or(before.server),
            protocol: self.protocol.or(before.protocol),
            // Those given before the command's name first, so that the later ones win.
            env: [before.env, self.env].concat(),
            header: [before.header, self.header].concat(),
            oauth: self.oauth.or(before.oauth),
        }
    }
}

/// Which server a client command talks to, and how: the client options, and a stdio
/// server given after `--`.
#[derive(Args, Default)]
struct Stdio {
    /// A stdio server to run: `-- COMMAND ARGS…`.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
    // After `command`: the OAuth options' help heading would take in what follows them.
    #[command(flatten)]
    client: ClientArgs,
}

#[derive(Subcommand)]
enum Command {
    /// Who the server is: name, version, protocol and capabilities.
    Discover(Stdio),
    /// The server's tools; with --format, their function-calling declarations (for every
    /// server of the config file when no server is named).
    Tools {
        /// Print the declarations a model vendor takes, as mcp-host makes them:
        /// openai, openai-responses, anthropic or gemini.
        #[arg(long, value_name = "VENDOR")]
        format: Option<mcp_host::Vendor>,
        #[command(flatten)]
        stdio: Stdio,
    },
    /// Calls a tool: `mcp call add a=2 b=3` or `--args '{"a":2,"b":3}'`.
    Call {
        /// The tool's name.
        tool: String,
        /// Arguments as key=value (a value that is valid JSON is taken as JSON).
        pairs: Vec<String>,
        /// Arguments as one JSON object.
        #[arg(long, value_name = "JSON")]
        args: Option<String>,
        #[command(flatten)]
        stdio: Stdio,
    },
    /// The server's resources and resource templates.
    Resources(Stdio),
    /// Reads a resource.
    Read {
        /// The resource's URI.
        uri: String,
        #[command(flatten)]
        stdio: Stdio,
    },
    /// The server's prompts.
    Prompts(Stdio),
    /// Gets a prompt: `mcp prompt explain topic=tools`.
    Prompt {
        /// The prompt's name.
        name: String,
        /// Arguments as key=value.
        pairs: Vec<String>,
        #[command(flatten)]
        stdio: Stdio,
    },
    /// Completes an argument of a prompt (or of a resource template with --template).
    Complete {
        /// The prompt's name, or with --template the template's URI.
        reference: String,
        /// The argument to complete.
        argument: String,
        /// What has been typed so far.
        #[arg(default_value = "")]
        value: String,
        /// The reference is a resource template URI, not a prompt.
        #[arg(long)]
        template: bool,
        #[command(flatten)]
        stdio: Stdio,
    },
    /// Prints change notifications: list changes and updates of the given resources.
    Listen {
        /// Resource URIs to follow.
        uris: Vec<String>,
        /// Stop after this many events (default: until interrupted).
        #[arg(long)]
        count: Option<usize>,
        #[command(flatten)]
        stdio: Stdio,
    },
    /// Serves every server of the config file as one MCP server, in both protocol eras
    /// (stdio by default). Tools and prompts are named server__name.
    Gateway {
        /// The config file (default: $MCP_CONFIG, then ./mcp.json, then
        /// $XDG_CONFIG_HOME/mcp/mcp.json or ~/.config/mcp/mcp.json; see docs/CONFIG.md).
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// Serve Streamable HTTP (with the 2024-11-05 HTTP+SSE endpoint beside it) on this
        /// address instead, such as 127.0.0.1:8080.
        #[arg(long, value_name = "ADDR")]
        http: Option<SocketAddr>,
        /// Share the requestState key ring and the 2025-era sessions with the other
        /// gateways of a fleet, through the Redis at this URL (with --http).
        #[arg(long, value_name = "URL", requires = "http")]
        redis: Option<String>,
        #[command(flatten)]
        drain: HttpServing,
    },
    /// Runs the bundled example server (stdio by default).
    ServeExample {
        /// Serve Streamable HTTP on this address instead, such as 127.0.0.1:8080.
        #[arg(long, value_name = "ADDR")]
        http: Option<SocketAddr>,
        /// Share the change bus, the task store and the requestState key ring with the
        /// other instances of a fleet, through the Redis at this URL, such as
        /// redis://127.0.0.1:6379 (with --http).
        #[arg(long, value_name = "URL", requires = "http")]
        redis: Option<String>,
        #[command(flatten)]
        drain: HttpServing,
    },
    /// Rotates the requestState key of a fleet sharing its key ring in Redis (servers
    /// started with --redis): each stages the new key, then makes it current a few seconds
    /// later, without a restart.
    RotateKeys {
        /// The fleet's Redis, such as redis://127.0.0.1:6379.
        #[arg(long, value_name = "URL")]
        redis: String,
    },
}

/// How an HTTP server is reached behind a load balancer, and how it stops on SIGTERM or
/// Ctrl-C.
#[derive(Args, Clone, Debug, PartialEq, Eq)]
struct HttpServing {
    /// A load balancer whose X-Forwarded-For (or PROXY header, with --proxy-protocol)
    /// names the client, so that per-address limits count clients. Repeatable.
    #[arg(long = "trusted-proxy", value_name = "IP")]
    trusted_proxies: Vec<std::net::IpAddr>,
    /// The trusted proxies open each connection with a PROXY protocol v2 header
    /// (HAProxy's send-proxy-v2).
    #[arg(long, requires = "trusted_proxies")]
    proxy_protocol: bool,
    /// A host name (or name:port) clients may reach the server by, besides loopback: the
    /// load balancer's. Repeatable.
    #[arg(long = "allow-host", value_name = "HOST")]
    allowed_hosts: Vec<String>,
    /// Seconds between turning unready (`GET /readyz` answers 503, so that a load balancer
    /// sends no more requests) and closing the listener.
    #[arg(long, value_name = "SECS", default_value_t = 2)]
    drain: u64,
    /// Seconds in-flight requests then get to finish before they are cancelled.
    #[arg(long, value_name = "SECS", default_value_t = 10)]
    grace: u64,
}

impl HttpServing {
    /// `config` with these settings.
    fn apply(
        &self,
        mut config: mcp_transport_http::HttpServerConfig,
    ) -> mcp_transport_http::HttpServerConfig {
        config = config
            .trusted_proxies(self.trusted_proxies.iter().copied())
            .proxy_protocol(self.proxy_protocol);
        if !self.allowed_hosts.is_empty() {
            let mut hosts = mcp_transport_http::AllowList::loopback();
            for host in &self.allowed_hosts {
                hosts = hosts.with(host.clone());
            }
            config = config.allowed_hosts(hosts);
        }
        config
    }

    /// Waits for SIGTERM or Ctrl-C, then stops `running` as a fleet expects: unready
    /// first, then no new connections, then what is in flight finished or cancelled.
    async fn serve_until_stopped(self, running: mcp_transport_http::RunningServer) {
        stop_signal().await;
        running.set_ready(false);
        tokio::time::sleep(Duration::from_secs(self.drain)).await;
        running.shutdown(Duration::from_secs(self.grace)).await;
    }
}

/// SIGTERM (what an orchestrator sends) or Ctrl-C.
async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

fn main() -> ExitCode {
    // `mcp serve-example` alone is how a host spawns the example server over stdio: it
    // starts without building clap's grammar of every subcommand, which at start-up cost
    // more instructions and heap than the server itself. Any other command line goes
    // through clap.
    if plain_serve_example(std::env::args_os().skip(1)) {
        return serve_example_stdio();
    }
    let cli = Cli::parse();
    let gateway = matches!(cli.command, Some(Command::Gateway { .. }));
    if cli.verbose || gateway {
        stderr_log(cli.verbose, gateway);
    }
    // The stdio example server is one connection: one thread serves it best (no
    // hand-offs between workers, no second stack). The HTTP example server's main thread
    // only accepts: its connections have threads of their own (`connection_threads`).
    // Everything else gets two workers.
    let workers = match &cli.command {
        Some(Command::ServeExample { .. }) => 1,
        _ => 2,
    };
    let runtime = match runtime(workers) {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(Box::pin(run(cli))) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Error::ToolFailed) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// A runtime with every driver enabled: current-thread for one worker, multi-threaded
/// with `workers` threads otherwise.
fn runtime(workers: usize) -> std::io::Result<tokio::runtime::Runtime> {
    let mut builder = if workers == 1 {
        tokio::runtime::Builder::new_current_thread()
    } else {
        let mut builder = tokio::runtime::Builder::new_multi_thread();
        builder.worker_threads(workers);
        builder
    };
    builder.enable_all().build()
}

/// Whether the arguments (after the program's name) are exactly `serve-example`.
fn plain_serve_example(mut args: impl Iterator<Item = std::ffi::OsString>) -> bool {
    args.next().is_some_and(|first| first == "serve-example") && args.next().is_none()
}

/// `mcp serve-example` without options: the stdio example server on one thread, as the
/// clap path runs it.
fn serve_example_stdio() -> ExitCode {
    let runtime = match runtime(1) {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    // Boxed, the server's future is not copied from frame to frame down `block_on`'s
    // stack (each copy would be stack pages touched for good).
    match runtime.block_on(Box::pin(example::serve_stdio())) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", Error::Server(e));
            ExitCode::FAILURE
        }
    }
}

/// Logging on stderr: with `verbose`, the engine's `mcp_wire` trace events (every frame in
/// and out); for the gateway, its audit log of every call and its upstreams coming and
/// going; warnings always.
fn stderr_log(verbose: bool, gateway: bool) {
    use tracing_subscriber::filter::{LevelFilter, Targets};
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    let mut filter = Targets::new().with_default(LevelFilter::WARN);
    if verbose {
        filter = filter.with_target("mcp_wire", LevelFilter::TRACE);
    }
    if gateway {
        filter = filter
            .with_target("mcp_host::audit", LevelFilter::INFO)
            .with_target("mcp_host::gateway", LevelFilter::INFO);
    }
    let _ = tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .without_time()
                .with_target(false),
        )
        .with(filter)
        .try_init();
}

/// `mcp gateway`: the servers of the config file, served as one until stdin closes (stdio)
/// or the process is interrupted (HTTP).
async fn gateway(
    config: Option<PathBuf>,
    http: Option<SocketAddr>,
    redis: Option<String>,
    drain: HttpServing,
) -> Result<(), Error> {
    let Some(path) = target::config_path(config.as_deref()) else {
        return Err(Error::Arguments(
            "mcp gateway needs a config file: --config FILE, $MCP_CONFIG or ./mcp.json \
             (see docs/CONFIG.md)"
                .to_owned(),
        ));
    };
    let config = mcp_host::HostConfig::load(&path).map_err(|source| Error::Config {
        path: path.clone(),
        source,
    })?;
    let mut builder = mcp_host::Gateway::builder();
    // Each gateway of a fleet follows the upstreams' changes itself, so the change bus
    // stays its own; what a request carries from one gateway to another is its sealed
    // requestState, or its 2025-era session.
    let mut legacy = mcp_legacy::http::LegacyHttpConfig::default();
    if let Some(url) = redis {
        let keys = mcp_server::RedisStateKeys::builder(&url).connect().await?;
        builder = builder.server_setup(move |server| server.state_keys(keys.keys()));
        let sessions = mcp_legacy::http::SessionStore::redis(&url)
            .connect()
            .await
            .map_err(Error::Serve)?;
        legacy = legacy.session_store(sessions);
    }
    let gateway = builder
        .info("mcp-gateway", env!("CARGO_PKG_VERSION"))
        .config(config)
        // Every call, on stderr (target `mcp_host::audit`).
        .middleware(mcp_host::AuditLog::with_capacity(0))
        .connect()
        .await
        .map_err(Error::Gateway)?;
    for (name, down) in gateway.status() {
        if let Some(reason) = down {
            eprintln!("mcp gateway: {name} is unavailable: {reason}");
        }
    }
    match http {
        None => gateway.serve_stdio().await,
        Some(addr) => {
            let running = gateway
                .bind_http_with(
                    addr,
                    drain.apply(
                        mcp_transport_http::HttpServerConfig::default().connection_threads(2),
                    ),
                    legacy,
                )
                .await
                .map_err(Error::Gateway)?;
            println!("{}", running.url());
            drain.serve_until_stopped(running).await;
            gateway.shutdown().await;
        }
    }
    Ok(())
}

async fn run(cli: Cli) -> Result<(), Error> {
    let Some(command) = cli.command else {
        return tour::run().await;
    };
    if let Command::ServeExample { http, drain, redis } = command {
        // Accepted before any command's name, the client options would be silently
        // ignored here.
        if cli.client != ClientArgs::default() {
            return Err(Error::Arguments(
                "serve-example takes no client options (--json, --config, --server, \
                 --protocol, -e, --header, --oauth-*, --no-auth)"
                    .to_owned(),
            ));
        }
        return match http {
            None => Ok(example::serve_stdio().await?),
            Some(addr) => example::serve_http(addr, drain, redis.as_deref()).await,
        };
    }
    if let Command::RotateKeys { redis } = command {
        let ring = mcp_server::RedisStateKeys::builder(redis).connect().await?;
        if ring.rotate().await? {
            println!(
                "rotating: every server stages the new key now and seals with it within seconds"
            );
        } else {
            println!("a rotation is already under way; try again once it is done");
        }
        return Ok(());
    }
    if let Command::Gateway {
        config,
        http,
        redis,
        drain,
    } = command
    {
        return gateway(config.or(cli.client.config), http, redis, drain).await;
    }
    let stdio = match &command {
        Command::Discover(s)
        | Command::Resources(s)
        | Command::Prompts(s)
        | Command::Tools { stdio: s, .. }
        | Command::Call { stdio: s, .. }
        | Command::Read { stdio: s, .. }
        | Command::Prompt { stdio: s, .. }
        | Command::Complete { stdio: s, .. }
        | Command::Listen { stdio: s, .. } => s,
        Command::ServeExample { .. } | Command::Gateway { .. } | Command::RotateKeys { .. } => {
            unreachable_serve()
        }
    };
    let options = stdio.client.clone().or(cli.client);
    let config_path = target::config_path(options.config.as_deref());
    let config = match &config_path {
        Some(path) => Some(
            mcp_host::HostConfig::load(path).map_err(|source| Error::Config {
                path: path.clone(),
                source,
            })?,
        ),
        None => None,
    };
    // Declarations for a whole config: every server in the file, through mcp-host.
    if let Command::Tools {
        format: Some(vendor),
        stdio,
    } = &command
        && options.server.is_none()
        && stdio.command.is_empty()
        && let Some(config) = config
    {
        return declarations_for_config(config, *vendor).await;
    }
    let overrides = Overrides {
        env: options.env.clone(),
        headers: options.header.clone(),
    };
    let target = target::resolve(
        options.server.as_deref(),
        &stdio.command,
        config.as_ref(),
        &overrides,
    )?;
    // Without --protocol, the config entry's protocolVersions (or detection) decide.
    let era = options.protocol.as_deref().map(|protocol| match protocol {
        "detect" => EraChoice::Detect,
        "modern" => EraChoice::Modern,
        "legacy" => EraChoice::Legacy,
        version => EraChoice::Version(version.to_owned()),
    });
    let rules = match &target {
        Target::Server { name, config } => Some(Rules::of(name, config)),
        Target::Example => None,
    };
    let session = connect(&target, era, Some(&options.oauth)).await?;
    let outcome = execute(&session, command, options.json, rules.as_ref()).await;
    session.close().await;
    outcome
}

/// `ServeExample` returned above; this arm cannot be reached, and says so without a panic.
fn unreachable_serve() -> &'static Stdio {
    static NONE: std::sync::OnceLock<Stdio> = std::sync::OnceLock::new();
    NONE.get_or_init(Stdio::default)
}

/// A client for the terminal: elicitation asked interactively, roots the current directory,
/// and (for an HTTP server, unless `oauth` is `None` or says `--no-auth`) OAuth sign-in.
pub(crate) async fn connect(
    target: &Target,
    era: Option<EraChoice>,
    oauth: Option<&oauth::OAuthArgs>,
) -> Result<Session, Error> {
    let builder = Client::builder("mcp", env!("CARGO_PKG_VERSION"))
        .on_elicit(interact::elicit)
        .on_roots(|| async {
            let cwd = std::env::current_dir().map_err(|e| e.to_string())?;
            let uri = format!("file://{}", cwd.display());
            serde_json::from_value(json!({"roots": [{"uri": uri, "name": "current directory"}]}))
                .map_err(|e| e.to_string())
        });
    target::connect(target, builder, era, oauth).await
}

/// A config entry's `allow` and `deny` lists, for the commands that list or call tools.
struct Rules {
    server: String,
    exposure: mcp_host::Exposure,
}

impl Rules {
    fn of(server: &str, config: &mcp_host::ServerConfig) -> Self {
        let mut exposure = mcp_host::Exposure::new();
        if let Some(allow) = &config.allow {
            exposure = exposure.allow(server, allow.iter().cloned());
        }
        Rules {
            server: server.to_owned(),
            exposure: exposure.deny(server, config.deny.iter().cloned()),
        }
    }

    fn admits(rules: Option<&Rules>, tool: &str) -> bool {
        rules.is_none_or(|r| r.exposure.admits(&r.server, tool))
    }
}

async fn execute(
    session: &Session,
    command: Command,
    json: bool,
    rules: Option<&Rules>,
) -> Result<(), Error> {
    let client = &session.client;
    let width = output::width();
    match command {
        Command::Discover(_) => {
            let found = client.discover().await?;
            let value = serde_json::to_value(&found)?;
            if json {
                return print_json(&value);
            }
            print!("{}", describe(&value, &session.verdict.version));
        }
        Command::Tools { format, .. } => {
            let mut tools = client.list_tools_all().await?;
            tools.retain(|tool| Rules::admits(rules, &tool.name));
            if let Some(vendor) = format {
                // One server: its declared name (what a config would call it) prefixes the
                // tools, as mcp-host names them for a model.
                let found = serde_json::to_value(client.discover().await?)?;
                let name = found["_meta"]["io.modelcontextprotocol/serverInfo"]["name"]
                    .as_str()
                    .unwrap_or("server")
                    .to_owned();
                let catalog = mcp_host::Catalog::new([(name.as_str(), tools.as_slice())]);
                return print_json(&catalog.tools_json(vendor));
            }
            if json {
                return print_json(&json!({"tools": tools}));
            }
            print!("{}", tool_table(&tools, width));
        }
        Command::Call {
            tool, pairs, args, ..
        } => {
            if !Rules::admits(rules, &tool) {
                return Err(Error::NotAllowed {
                    server: rules.map(|r| r.server.clone()).unwrap_or_default(),
                    tool,
                });
            }
            let arguments = call_arguments(args.as_deref(), &pairs)?;
            let options = CallOptions::default().progress(interact::progress);
            let result = client.call_tool_with(&tool, arguments, &options).await;
            interact::progress_done();
            let result = serde_json::to_value(result?)?;
            if json {
                print_json(&result)?;
            } else {
                let text = output::content(&result["content"]);
                if text.is_empty() && !result["structuredContent"].is_null() {
                    println!(
                        "{}",
                        serde_json::to_string_pretty(&result["structuredContent"])?
                    );
                } else {
                    print!("{text}");
                }
            }
            if result["isError"] == true {
                if !json {
                    eprintln!("error: the tool {tool:?} reported an error");
                }
                return Err(Error::ToolFailed);
            }
        }
        Command::Resources(_) => {
            let resources = client.list_resources_all().await?;
            let templates = client.list_resource_templates_all().await?;
            if json {
                return print_json(
                    &json!({"resources": resources, "resourceTemplates": templates}),
                );
            }
            let mut rows: Vec<Vec<String>> = resources
                .iter()
                .map(|r| {
                    vec![
                        r.uri.clone(),
                        r.mime_type.clone().unwrap_or_default(),
                        r.description.clone().unwrap_or_else(|| r.name.clone()),
                    ]
                })
                .collect();
            rows.extend(templates.iter().map(|t| {
                vec![
                    t.uri_template.clone(),
                    t.mime_type.clone().unwrap_or_default(),
                    t.description.clone().unwrap_or_else(|| t.name.clone()),
                ]
            }));
            print!(
                "{}",
                output::table(&["URI", "TYPE", "DESCRIPTION"], &rows, width)
            );
        }
        Command::Read { uri, .. } => {
            let read = serde_json::to_value(client.read_resource(&uri).await?)?;
            if json {
                return print_json(&read);
            }
            for contents in read["contents"].as_array().into_iter().flatten() {
                let text = output::resource(contents);
                print!("{text}");
                if !text.ends_with('\n') {
                    println!();
                }
            }
        }
        Command::Prompts(_) => {
            let prompts = client.list_prompts_all().await?;
            if json {
                return print_json(&json!({"prompts": prompts}));
            }
            let rows: Vec<Vec<String>> = prompts
                .iter()
                .map(|p| {
                    let args = p
                        .arguments
                        .iter()
                        .flatten()
                        .map(|a| {
                            if a.required == Some(true) {
                                a.name.clone()
                            } else {
                                format!("[{}]", a.name)
                            }
                        })
                        .collect::<Vec<_>>()
                        .join(" ");
                    vec![
                        p.name.clone(),
                        args,
                        p.description.clone().unwrap_or_default(),
                    ]
                })
                .collect();
            print!(
                "{}",
                output::table(&["PROMPT", "ARGUMENTS", "DESCRIPTION"], &rows, width)
            );
        }
        Command::Prompt { name, pairs, .. } => {
            let mut arguments = mcp_types::OrderedMap::new();
            for pair in &pairs {
                let (key, value) = split_pair(pair)?;
                arguments.insert(key, value.to_owned());
            }
            let prompt = serde_json::to_value(client.get_prompt(&name, arguments).await?)?;
            if json {
                return print_json(&prompt);
            }
            for message in prompt["messages"].as_array().into_iter().flatten() {
                let role = message["role"].as_str().unwrap_or("?");
                let text = output::content(&Value::Array(vec![message["content"].clone()]));
                print!("{role}: {text}");
            }
        }
        Command::Complete {
            reference,
            argument,
            value,
            template,
            ..
        } => {
            let reference = if template {
                json!({"type": "ref/resource", "uri": reference})
            } else {
                json!({"type": "ref/prompt", "name": reference})
            };
            let params = json!({"ref": reference, "argument": {"name": argument, "value": value}});
            let completed = serde_json::to_value(client.complete(params).await?)?;
            if json {
                return print_json(&completed);
            }
            for value in completed["completion"]["values"]
                .as_array()
                .into_iter()
                .flatten()
            {
                println!("{}", output::printable(value.as_str().unwrap_or_default()));
            }
        }
        Command::Listen { uris, count, .. } => listen(client, uris, count, json).await?,
        Command::ServeExample { .. } | Command::Gateway { .. } | Command::RotateKeys { .. } => {}
    }
    Ok(())
}

/// `mcp tools --format VENDOR` with a config file and no server named: every server of
/// the file, connected concurrently by mcp-host, as one set of declarations.
async fn declarations_for_config(
    config: mcp_host::HostConfig,
    vendor: mcp_host::Vendor,
) -> Result<(), Error> {
    let host = mcp_host::Host::builder().config(config).connect().await?;
    for (server, error) in host.failures() {
        eprintln!("warning: {server}: {error}");
    }
    let failed = !host.failures().is_empty();
    let declarations = host.catalog().tools_json(vendor);
    host.shutdown().await;
    print_json(&declarations)?;
    if failed {
        return Err(Error::Arguments(
            "some servers of the config could not be reached (see the warnings)".to_owned(),
        ));
    }
    Ok(())
}

async fn listen(
    client: &Client,
    uris: Vec<String>,
    count: Option<usize>,
    json: bool,
) -> Result<(), Error> {
    let mut filter = mcp_types::SubscriptionFilter::default();
    filter.tools_list_changed = Some(true);
    filter.prompts_list_changed = Some(true);
    filter.resources_list_changed = Some(true);
    if !uris.is_empty() {
        filter.resource_subscriptions = Some(uris);
    }
    let mut subscription = client.listen(filter).await?;
    let mut seen = 0;
    loop {
        let event = tokio::select! {
            event = subscription.next() => event,
            _ = tokio::signal::ctrl_c() => None,
        };
        let Some(event) = event else { break };
        let (name, detail) = match &event {
            ListenEvent::Acknowledged(_) => {
                if !json {
                    eprintln!("listening (Ctrl-C to stop)");
                }
                continue;
            }
            ListenEvent::ToolsListChanged => ("tools/list_changed", None),
            ListenEvent::PromptsListChanged => ("prompts/list_changed", None),
            ListenEvent::ResourcesListChanged => ("resources/list_changed", None),
            ListenEvent::ResourceUpdated(uri) => ("resources/updated", Some(uri.clone())),
            _ => ("other", None),
        };
        if json {
            println!("{}", json!({"event": name, "uri": detail}));
        } else {
            println!(
                "{name}{}",
                output::printable(&detail.map(|u| format!(" {u}")).unwrap_or_default())
            );
        }
        seen += 1;
        if count.is_some_and(|c| seen >= c) {
            break;
        }
    }
    Ok(())
}

fn print_json(value: &Value) -> Result<(), Error> {
    println!("{}", serde_json::to_string_pretty(value)?);
    Ok(())
}

/// A `DiscoverResult` as a few readable lines.
pub(crate) fn describe(found: &Value, version: &str) -> String {
    let info = &found["_meta"]["io.modelcontextprotocol/serverInfo"];
    let mut out = format!(
        "server    {} {}\nprotocol  {version}\n",
        info["name"].as_str().unwrap_or("?"),
        info["version"].as_str().unwrap_or("?"),
    );
    let capabilities: Vec<&str> = found["capabilities"]
        .as_object()
        .map(|c| c.keys().map(String::as_str).collect())
        .unwrap_or_default();
    let _ = writeln!(out, "offers    {}", capabilities.join(", "));
    // The first line of the instructions: the rest is for the model (`--json` has it all).
    if let Some(first) = found["instructions"]
        .as_str()
        .and_then(|text| text.lines().map(str::trim).find(|l| !l.is_empty()))
    {
        let first = first.trim_start_matches('#').trim();
        let _ = writeln!(out, "about     {}", output::cut(first, 100));
    }
    output::printable(&out).into_owned()
}

/// The `TOOL ARGUMENTS DESCRIPTION` table of `mcp tools` (and of the tour), `width` wide.
pub(crate) fn tool_table(tools: &[mcp_types::Tool], width: usize) -> String {
    let rows: Vec<Vec<String>> = tools
        .iter()
        .map(|t| {
            vec![
                t.name.clone(),
                arguments(&serde_json::to_value(&t.input_schema).unwrap_or_default()),
                t.description.clone().unwrap_or_default(),
            ]
        })
        .collect();
    output::table(&["TOOL", "ARGUMENTS", "DESCRIPTION"], &rows, width)
}

/// The names in a JSON Schema's `required` array (none when it has none).
pub(crate) fn required(schema: &Value) -> Vec<&str> {
    schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

/// A tool's arguments in one line: `a b [c]` (optional ones in brackets).
pub(crate) fn arguments(schema: &Value) -> String {
    let required = required(schema);
    schema["properties"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(name, _)| {
            if required.contains(&name.as_str()) {
                name.clone()
            } else {
                format!("[{name}]")
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn split_pair(pair: &str) -> Result<(&str, &str), Error> {
    pair.split_once('=')
        .filter(|(k, _)| !k.is_empty())
        .ok_or_else(|| Error::Arguments(format!("{pair:?} is not key=value")))
}

/// The arguments of `mcp call`: `--args` JSON, then each key=value on top (a value that
/// parses as JSON is JSON, so `a=2` is a number and `name=Ada` a string).
fn call_arguments(args: Option<&str>, pairs: &[String]) -> Result<Map<String, Value>, Error> {
    let mut arguments = match args {
        None => Map::new(),
        Some(text) => match serde_json::from_str(text) {
            Ok(Value::Object(map)) => map,
            Ok(_) => return Err(Error::Arguments("--args must be a JSON object".to_owned())),
            Err(e) => return Err(Error::Arguments(format!("--args is not JSON: {e}"))),
        },
    };
    for pair in pairs {
        let (key, value) = split_pair(pair)?;
        let value = serde_json::from_str(value).unwrap_or_else(|_| Value::from(value));
        arguments.insert(key.to_owned(), value);
    }
    Ok(arguments)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_value_arguments_are_json_when_they_parse() {
        let args = call_arguments(
            Some(r#"{"a": 1, "b": 1}"#),
            &["b=2".into(), "name=Ada".into(), "flag=true".into()],
        )
        .unwrap();
        assert_eq!(
            Value::Object(args),
            json!({"a": 1, "b": 2, "name": "Ada", "flag": true})
        );
        assert!(call_arguments(Some("[1]"), &[]).is_err());
        assert!(call_arguments(None, &["novalue".into()]).is_err());
        assert!(call_arguments(None, &["=x".into()]).is_err());
    }

    #[test]
    fn only_a_bare_serve_example_skips_clap() {
        let plain = |args: &[&str]| plain_serve_example(args.iter().map(Into::into));
        assert!(plain(&["serve-example"]));
        assert!(!plain(&[]));
        assert!(!plain(&["serve-example", "--http", "127.0.0.1:0"]));
        assert!(!plain(&["serve-example", "--help"]));
        assert!(!plain(&["--verbose", "serve-example"]));
        assert!(!plain(&["serve-examples"]));
        // What the fast path serves is what clap would have chosen.
        let cli = Cli::try_parse_from(["mcp", "serve-example"]).unwrap();
        assert!(!cli.verbose && cli.client == ClientArgs::default());
        let Some(Command::ServeExample { http: None, .. }) = cli.command else {
            panic!("`mcp serve-example` is not the plain example server");
        };
    }

    #[test]
    fn client_options_go_before_or_after_the_command() {
        let cli =
            Cli::try_parse_from(["mcp", "--json", "-s", "a", "tools", "--protocol", "modern"])
                .unwrap();
        let Some(Command::Tools { stdio, .. }) = cli.command else {
            panic!("not tools");
        };
        let options = stdio.client.or(cli.client);
        assert!(options.json);
        assert_eq!(options.server.as_deref(), Some("a"));
        assert_eq!(options.protocol.as_deref(), Some("modern"));
        // After the command's name wins.
        let cli =
            Cli::try_parse_from(["mcp", "--server", "a", "call", "add", "--server", "b"]).unwrap();
        let Some(Command::Call { stdio, .. }) = cli.command else {
            panic!("not call");
        };
        assert_eq!(stdio.client.or(cli.client).server.as_deref(), Some("b"));
        // The example server takes none of them.
        for option in ["--json", "--server", "--protocol", "--config", "--no-auth"] {
            assert!(
                Cli::try_parse_from(["mcp", "serve-example", option, "x"]).is_err(),
                "{option}"
            );
        }
    }

    #[test]
    fn a_schema_reads_as_an_argument_line() {
        let schema = json!({"properties": {"a": {}, "b": {}, "c": {}}, "required": ["a", "b"]});
        assert_eq!(arguments(&schema), "a b [c]");
    }
}
