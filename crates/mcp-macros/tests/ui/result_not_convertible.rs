use mcp::prelude::*;

/// Returns a number, which is not a tool result.
#[tool]
async fn count() -> u64 {
    1
}

fn main() {
    let _ = Server::builder("s", "1").tool(count);
}
