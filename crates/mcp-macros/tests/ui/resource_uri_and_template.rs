use mcp::prelude::*;

/// Both.
#[resource(uri = "a://b", template = "a://{b}")]
async fn both() -> String {
    String::new()
}

/// Neither.
#[resource(mime_type = "text/plain")]
async fn neither() -> String {
    String::new()
}

fn main() {}
