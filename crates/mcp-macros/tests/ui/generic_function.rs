use mcp::prelude::*;

/// Shows.
#[tool]
async fn show<T: std::fmt::Display>(value: T) -> String {
    value.to_string()
}

fn main() {}
