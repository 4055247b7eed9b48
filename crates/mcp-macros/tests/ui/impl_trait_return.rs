use mcp::prelude::*;

/// Shows.
#[tool]
async fn show() -> impl Into<String> {
    "x"
}

fn main() {}
