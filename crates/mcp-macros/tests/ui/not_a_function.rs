use mcp::prelude::*;

#[tool]
struct Echo;

#[tools]
fn helper() {}

fn main() {}
