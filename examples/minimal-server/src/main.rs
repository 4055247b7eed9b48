use mcp::prelude::*;
/// Echoes its text back.
#[tool]
async fn echo(text: String) -> String {
    text
}
/// Adds two integers.
#[tool]
async fn add(a: i64, b: i64) -> String {
    (a + b).to_string()
}
#[tokio::main]
async fn main() -> Result<(), mcp::Error> {
    let server = Server::builder("minimal-server", "0.2.0")
        .tool(echo)
        .tool(add)
        .build()?;
    match std::env::args().skip_while(|arg| arg != "--http").nth(1) {
        Some(addr) => mcp::serve_http(server, &addr).await,
        None => mcp::serve_stdio(server).await,
    }
}
