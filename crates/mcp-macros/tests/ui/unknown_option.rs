use mcp::prelude::*;

/// Reads.
#[tool(readonly)]
async fn read() -> String {
    String::new()
}

fn main() {}
