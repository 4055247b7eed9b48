use mcp::prelude::*;

struct Counter;

impl Counter {
    /// Reads.
    #[tool]
    async fn read(&self) -> String {
        String::new()
    }
}

fn main() {}
