use mcp::prelude::*;

/// Reads.
#[tool(name = "a", name = "b")]
async fn read() -> String {
    String::new()
}

fn main() {}
