//! Golden messages of the Skills extension (SEP-2640, `seps/2640-skills-extension.md`):
//! each reads into its type and writes back to the same JSON.

mod golden;

use golden::{check, meta_with};

use mcp_types::Request;
use mcp_types::skills::{
    GetSkillRequest, GetSkillResult, ListSkillsRequest, ListSkillsResult, ReadDirectoryRequest,
    ReadDirectoryResult, SkillResources, SkillsSettings,
};
use serde_json::{Value, json};

fn meta() -> Value {
    meta_with(&json!({}))
}

fn digest(n: u8) -> String {
    format!("sha256:{}", format!("{n:02x}").repeat(32))
}

#[test]
fn skills_list_request_and_result() {
    let request: ListSkillsRequest = check(&json!({
        "id": 4, "jsonrpc": "2.0", "method": "skills/list",
        "params": {"_meta": meta(), "cursor": "next"}
    }));
    assert_eq!(ListSkillsRequest::METHOD, "skills/list");
    assert_eq!(request.params.cursor.as_deref(), Some("next"));
    let result: ListSkillsResult = check(&json!({
        "resultType": "complete",
        "skills": [
            {
                "uri": "skill://acme/billing/refunds/SKILL.md",
                "frontmatter": {
                    "name": "refunds",
                    "description": "Process customer refund requests per company policy",
                    "license": "Apache-2.0"
                },
                "resources": [
                    {"uri": "skill://acme/billing/refunds/SKILL.md", "digest": digest(1), "size": 3871},
                    {"uri": "skill://acme/billing/refunds/examples/email.md", "digest": digest(2), "size": 962}
                ]
            },
            {
                "uri": "skill://generated/SKILL.md",
                "frontmatter": {"name": "generated", "description": "Made on demand"},
                "resources": "dynamic"
            }
        ],
        "nextCursor": "abc",
        "ttlMs": 60000,
        "cacheScope": "public"
    }));
    assert_eq!(result.skills[0].name(), Some("refunds"));
    assert_eq!(
        result.skills[0]
            .resources
            .file("skill://acme/billing/refunds/examples/email.md")
            .map(|f| f.size),
        Some(962)
    );
    assert_eq!(result.skills[1].resources, SkillResources::Dynamic);
}

#[test]
fn skills_get_request_and_result() {
    let request: GetSkillRequest = check(&json!({
        "id": 5, "jsonrpc": "2.0", "method": "skills/get",
        "params": {"_meta": meta(), "uri": "skill://pdf-processing/SKILL.md"}
    }));
    assert_eq!(request.params.uri, "skill://pdf-processing/SKILL.md");
    let result: GetSkillResult = check(&json!({
        "resultType": "complete",
        "skill": {
            "uri": "skill://pdf-processing/SKILL.md",
            "frontmatter": {
                "name": "pdf-processing",
                "description": "Extract, fill, and assemble PDF documents",
                "metadata": {"version": "2.1.0"}
            },
            "resources": [
                {"uri": "skill://pdf-processing/SKILL.md", "digest": digest(3), "size": 5120}
            ]
        },
        "ttlMs": 0,
        "cacheScope": "private"
    }));
    assert_eq!(result.skill.frontmatter["metadata"]["version"], "2.1.0");
}

#[test]
fn directory_read_request_and_result() {
    let request: ReadDirectoryRequest = check(&json!({
        "id": 7, "jsonrpc": "2.0", "method": "resources/directory/read",
        "params": {"_meta": meta(), "uri": "skill://pdf-processing/templates"}
    }));
    assert_eq!(request.params.cursor, None);
    let result: ReadDirectoryResult = check(&json!({
        "resultType": "complete",
        "resources": [
            {"uri": "skill://pdf-processing/templates/invoice.md", "name": "invoice.md", "mimeType": "text/markdown"},
            {"uri": "skill://pdf-processing/templates/regional", "name": "regional", "mimeType": "inode/directory"}
        ]
    }));
    assert_eq!(
        result.resources[1].mime_type.as_deref(),
        Some("inode/directory")
    );
}

#[test]
fn settings_are_inline_and_empty_by_default() {
    let empty: SkillsSettings = check(&json!({}));
    assert!(!empty.directory_read());
    let with: SkillsSettings = check(&json!({"directoryRead": true}));
    assert!(with.directory_read());
}
