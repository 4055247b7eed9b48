//! The machine's floor: the least any MCP server must do per call, so that the other
//! servers' figures can be read against what the machine, the pipes and the load driver
//! allow.
//!
//! - `floor stdio`: reads a line, parses it with `serde_json`, writes a fixed result that
//!   carries the request's id (and echoes `params.arguments.text` for `tools/call`, so
//!   the driver's verification holds); answers `initialize` too, and writes nothing for
//!   notifications.
//! - `floor http ADDR`: a bare hyper 1 service that does the same per POST body, one JSON
//!   reply per request; prints `http://ADDR/mcp` (the bound address) on the first line of
//!   stdout.

mod http1;

use std::io::{BufRead as _, Write as _};
use std::process::ExitCode;

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use hyper::{Request, Response, StatusCode};
use serde_json::Value;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["stdio"] => stdio(),
        ["http", addr] => http(addr),
        _ => Err("usage: floor stdio | floor http ADDR".to_owned()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("floor: {message}");
            ExitCode::FAILURE
        }
    }
}

/// The reply to one message, or `None` for a notification.
fn reply(message: &[u8]) -> Option<Vec<u8>> {
    let Ok(request) = serde_json::from_slice::<Value>(message) else {
        return Some(
            br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#
                .to_vec(),
        );
    };
    let id = request.get("id")?;
    let mut out = Vec::with_capacity(message.len() + 128);
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    serde_json::to_writer(&mut out, id).ok()?;
    if request.get("method").and_then(Value::as_str) == Some("initialize") {
        out.extend_from_slice(
            br#","result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"floor","version":"0"}}}"#,
        );
    } else {
        let text = request
            .pointer("/params/arguments/text")
            .and_then(Value::as_str)
            .unwrap_or("ok");
        out.extend_from_slice(br#","result":{"content":[{"type":"text","text":"#);
        serde_json::to_writer(&mut out, text).ok()?;
        out.extend_from_slice(br#"}],"resultType":"complete"}}"#);
    }
    Some(out)
}

fn stdio() -> Result<(), String> {
    let mut input = std::io::BufReader::with_capacity(256 * 1024, std::io::stdin().lock());
    let mut output = std::io::BufWriter::with_capacity(64 * 1024, std::io::stdout().lock());
    let mut line = Vec::with_capacity(128 * 1024);
    loop {
        line.clear();
        let n = input
            .read_until(b'\n', &mut line)
            .map_err(|e| format!("read stdin: {e}"))?;
        if n == 0 {
            return output.flush().map_err(|e| format!("write stdout: {e}"));
        }
        if let Some(mut out) = reply(&line) {
            out.push(b'\n');
            output
                .write_all(&out)
                .map_err(|e| format!("write stdout: {e}"))?;
        }
        // Flush only when no more input is buffered: pipelined requests are answered in
        // one write, a lone request at once.
        if input.buffer().is_empty() {
            output.flush().map_err(|e| format!("write stdout: {e}"))?;
        }
    }
}

fn http(addr: &str) -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the tokio runtime: {e}"))?;
    runtime.block_on(http1::serve("floor", addr, || {
        hyper::service::service_fn(serve)
    }))
}

async fn serve(
    request: Request<hyper::body::Incoming>,
) -> Result<Response<Full<Bytes>>, hyper::Error> {
    let body = request.into_body().collect().await?.to_bytes();
    let response = match reply(&body) {
        Some(out) => Response::builder()
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(out))),
        None => Response::builder()
            .status(StatusCode::ACCEPTED)
            .body(Full::new(Bytes::new())),
    };
    Ok(response.unwrap_or_else(|_| Response::new(Full::new(Bytes::new()))))
}
