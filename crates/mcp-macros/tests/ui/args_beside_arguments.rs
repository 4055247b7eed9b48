use mcp::prelude::*;
use mcp::server::Args;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Point {
    x: i64,
}

/// Moves.
#[tool]
async fn shift(Args(point): Args<Point>, by: i64) -> String {
    (point.x + by).to_string()
}

fn main() {}
