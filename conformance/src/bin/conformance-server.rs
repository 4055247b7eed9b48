//! The conformance suite's server: every fixture of `SCENARIOS.md`, over Streamable HTTP
//! (`--http ADDR`, the default, printing the endpoint URL as the one line of stdout) or
//! over stdio (`--stdio`). Logs go to stderr only.

use std::io::Write as _;
use std::net::SocketAddr;

use mcp_legacy::http::{DualEraHttp, LegacyHttpConfig};
use mcp_transport_http::HttpServerConfig;

fn usage() -> ! {
    eprintln!("usage: conformance-server [--http IP:PORT | --stdio]");
    std::process::exit(2);
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mode = match args.first().map(String::as_str) {
        None => Mode::Http("127.0.0.1:0".parse().unwrap_or_else(|_| usage())),
        Some("--http") => Mode::Http(
            args.get(1)
                .and_then(|a| a.parse().ok())
                .unwrap_or_else(|| usage()),
        ),
        Some("--stdio") => Mode::Stdio,
        Some(_) => usage(),
    };
    let server = match mcp_conformance::fixtures::server() {
        Ok(server) => server,
        Err(e) => {
            eprintln!("cannot build the fixtures: {e}");
            std::process::exit(1);
        }
    };
    let Some(runtime) = mcp_conformance::runtime(&mut tokio::runtime::Builder::new_multi_thread())
    else {
        std::process::exit(1);
    };
    runtime.block_on(async move {
        match mode {
            Mode::Stdio => server.serve_stdio().await,
            Mode::Http(addr) => {
                // The `Mcp-Param-*` checks and the Tasks extension's `Mcp-Name` fields
                // come from the server itself: nothing to wire here.
                let config = HttpServerConfig::default();
                // One endpoint for both eras: 2026-07-28 requests go to the modern
                // endpoint untouched, `initialize` opens a legacy session.
                let running = match DualEraHttp::bind(
                    addr,
                    server,
                    config,
                    LegacyHttpConfig::default(),
                )
                .await
                {
                    Ok(running) => running,
                    Err(e) => {
                        eprintln!("cannot serve on {addr}: {e}");
                        std::process::exit(1);
                    }
                };
                let mut stdout = std::io::stdout().lock();
                let _ = writeln!(stdout, "{}", running.url());
                let _ = stdout.flush();
                drop(stdout);
                // Run until killed.
                std::future::pending::<()>().await;
            }
        }
    });
}

enum Mode {
    Http(SocketAddr),
    Stdio,
}
