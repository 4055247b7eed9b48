use mcp::prelude::*;

struct Nothing;

#[tools]
impl Nothing {
    fn helper(&self) {}
}

fn main() {}
