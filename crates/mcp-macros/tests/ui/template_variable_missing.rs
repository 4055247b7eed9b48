use mcp::prelude::*;

/// A user.
#[resource(template = "users://{id}")]
async fn user(name: String) -> String {
    name
}

/// The readme.
#[resource(uri = "docs://readme")]
async fn readme(section: String) -> String {
    section
}

fn main() {}
