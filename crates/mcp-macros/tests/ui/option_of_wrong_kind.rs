use mcp::prelude::*;

/// Reads.
#[tool(name = 5)]
async fn read() -> String {
    String::new()
}

/// Writes.
#[tool(read_only = "yes")]
async fn write() -> String {
    String::new()
}

fn main() {}
