use mcp::prelude::*;

struct Counter(u64);

#[tools]
impl Counter {
    /// Counts.
    #[tool]
    async fn bump(&mut self) -> String {
        self.0 += 1;
        self.0.to_string()
    }
}

fn main() {}
