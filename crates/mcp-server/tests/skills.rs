//! The Skills extension on the server (SEP-2640): JSON requests in through
//! `Server::handle`, JSON out. What a request sends and what comes back is data; `call` is
//! the one function that talks to the server.

use std::path::PathBuf;

use base64::Engine as _;
use mcp_jsonrpc::{CancellationToken, ErrorObject, NotificationSink, Request, RequestContext};
use mcp_server::Server;
use mcp_server::skills::{Skill, Skills};
use mcp_types::{ErrorCode, RequestId};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

const PDF_MD: &str = "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\nlicense: Apache-2.0\nmetadata:\n  version: 2.1.0\n---\n# PDF\nSee references/FORMS.md.\n";

fn pdf() -> Skill {
    Skill::builder("pdf-processing")
        .file("SKILL.md", PDF_MD)
        .file("references/FORMS.md", "# Forms\n")
        .file("templates/invoice.md", "# Invoice\n")
        .file("templates/regional/eu-invoice.md", "# EU\n")
        .file("scripts/logo.bin", vec![0xff, 0x00, 0xfe])
        .build()
        .unwrap()
}

fn simple(path: &str) -> Skill {
    let name = path.rsplit('/').next().unwrap();
    Skill::builder(path)
        .file(
            "SKILL.md",
            format!("---\nname: {name}\ndescription: The {name} skill\n---\nBody of {name}\n"),
        )
        .build()
        .unwrap()
}

fn server(directory_read: bool) -> Server {
    Server::builder("skills-test", "1.0")
        .skills(
            Skills::new()
                .skill(Ok(pdf()))
                .skill(Ok(simple("git-workflow")))
                .skill(Ok(simple("acme/billing/refunds")))
                .directory_read(directory_read)
                .page_size(2),
        )
        .build()
        .unwrap()
}

/// Sends `method` with `params` and a `_meta` that does not declare the extension (the SEP
/// binds the methods to the server's declaration alone).
/// A request that must succeed: its result.
async fn ok(server: &Server, method: &str, params: Value) -> Value {
    call(server, method, params).await.unwrap()
}

async fn call(server: &Server, method: &str, params: Value) -> Result<Value, ErrorObject> {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    let raw = serde_json::value::to_raw_value(&params).unwrap();
    let (tx, _rx) = tokio::sync::mpsc::channel(16);
    let rpc = RequestContext::new(
        RequestId::Integer(1),
        CancellationToken::new(),
        NotificationSink::channel(tx),
    );
    let result = server
        .handle(Request::new(RequestId::Integer(1), method, Some(raw)), rpc)
        .await?;
    Ok(serde_json::from_str(result.get()).unwrap())
}

fn digest(bytes: &[u8]) -> String {
    mcp_types::skills::format_digest(&Sha256::digest(bytes).into())
}

/// The raw bytes of a `resources/read` result's first content.
fn bytes_of(read: &Value) -> Vec<u8> {
    let content = &read["contents"][0];
    match content["text"].as_str() {
        Some(text) => text.as_bytes().to_vec(),
        None => base64::engine::general_purpose::STANDARD
            .decode(content["blob"].as_str().unwrap())
            .unwrap(),
    }
}

#[tokio::test]
async fn the_extension_and_the_resources_capability_are_declared() {
    let with = server(true);
    let caps = serde_json::to_value(with.capabilities()).unwrap();
    assert_eq!(
        caps["extensions"]["io.modelcontextprotocol/skills"],
        json!({"directoryRead": true})
    );
    assert!(caps["resources"].is_object());
    let without = server(false);
    let caps = serde_json::to_value(without.capabilities()).unwrap();
    assert_eq!(
        caps["extensions"]["io.modelcontextprotocol/skills"],
        json!({})
    );
    // No skills at all still declares resources: skill files are read through them.
    let empty = Server::builder("empty", "1.0")
        .skills(Skills::new())
        .build()
        .unwrap();
    assert!(empty.capabilities().resources.is_some());
}

#[tokio::test]
async fn skills_list_pages_whole_entries() {
    let server = server(false);
    let first = call(&server, "skills/list", json!({})).await.unwrap();
    assert_eq!(first["resultType"], "complete");
    assert!(first["ttlMs"].is_u64() && first["cacheScope"].is_string());
    let cursor = first["nextCursor"].as_str().unwrap().to_owned();
    let second = call(&server, "skills/list", json!({"cursor": cursor}))
        .await
        .unwrap();
    assert!(second.get("nextCursor").is_none());
    let uris: Vec<&str> = [&first, &second]
        .iter()
        .flat_map(|page| page["skills"].as_array().unwrap())
        .map(|e| e["uri"].as_str().unwrap())
        .collect();
    assert_eq!(
        uris,
        [
            "skill://pdf-processing/SKILL.md",
            "skill://git-workflow/SKILL.md",
            "skill://acme/billing/refunds/SKILL.md"
        ]
    );
    // Each entry carries its whole manifest on its own page.
    let pdf = &first["skills"][0];
    assert_eq!(pdf["resources"].as_array().unwrap().len(), 5);
    assert_eq!(pdf["resources"][0]["uri"], pdf["uri"]);
    assert_eq!(
        pdf["frontmatter"],
        json!({"name": "pdf-processing", "description": "Extract, fill, and assemble PDF documents",
               "license": "Apache-2.0", "metadata": {"version": "2.1.0"}})
    );
    let bad = call(&server, "skills/list", json!({"cursor": "nonsense"}))
        .await
        .unwrap_err();
    assert_eq!(bad.code, ErrorCode::INVALID_PARAMS);
}

#[tokio::test]
async fn every_listed_file_reads_back_with_its_digest_and_size() {
    let server = server(false);
    let list = call(&server, "skills/list", json!({})).await.unwrap();
    for entry in list["skills"].as_array().unwrap() {
        for file in entry["resources"].as_array().unwrap() {
            let read = call(&server, "resources/read", json!({"uri": file["uri"]}))
                .await
                .unwrap();
            let bytes = bytes_of(&read);
            assert_eq!(file["size"], bytes.len(), "{}", file["uri"]);
            assert_eq!(file["digest"], digest(&bytes), "{}", file["uri"]);
        }
    }
    // A binary file is a blob with its raw bytes.
    let read = ok(
        &server,
        "resources/read",
        json!({"uri": "skill://pdf-processing/scripts/logo.bin"}),
    )
    .await;
    assert_eq!(bytes_of(&read), [0xff, 0x00, 0xfe]);
    assert_eq!(read["contents"][0]["mimeType"], "application/octet-stream");
}

/// The `resources/list` entry of `uri`.
async fn listed(server: &Server, uri: &str) -> Value {
    let list = call(server, "resources/list", json!({})).await.unwrap();
    list["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["uri"] == uri)
        .unwrap()
        .clone()
}

#[tokio::test]
async fn skill_md_is_listed_as_markdown_named_by_its_frontmatter() {
    let server = server(false);
    let skill_md = listed(&server, "skill://pdf-processing/SKILL.md").await;
    assert_eq!(skill_md["name"], "pdf-processing");
    assert_eq!(
        skill_md["description"],
        "Extract, fill, and assemble PDF documents"
    );
    assert_eq!(skill_md["mimeType"], "text/markdown");
    assert_eq!(skill_md["size"], PDF_MD.len());
    assert!(skill_md.get("_meta").is_none());
}

#[tokio::test]
async fn skills_get_answers_for_served_skills_only() {
    let server = server(false);
    let got = ok(
        &server,
        "skills/get",
        json!({"uri": "skill://acme/billing/refunds/SKILL.md"}),
    )
    .await;
    assert_eq!(got["skill"]["uri"], "skill://acme/billing/refunds/SKILL.md");
    assert_eq!(got["skill"]["frontmatter"]["name"], "refunds");
    assert!(got.get("nextCursor").is_none());
    assert!(got["ttlMs"].is_u64() && got["cacheScope"].is_string());
    for unknown in [
        "skill://nowhere/SKILL.md",
        "skill://pdf-processing/references/FORMS.md",
        "skill://pdf-processing",
    ] {
        let error = call(&server, "skills/get", json!({"uri": unknown}))
            .await
            .unwrap_err();
        assert_eq!(error.code, ErrorCode::INVALID_PARAMS, "{unknown}");
        assert_eq!(error.data.as_ref().unwrap()["uri"], unknown);
    }
    let missing = call(&server, "skills/get", json!({})).await.unwrap_err();
    assert_eq!(missing.code, ErrorCode::INVALID_PARAMS);
}

/// Every child of the directory `uri`, following cursors.
async fn directory(server: &Server, uri: &str) -> Result<Vec<Value>, ErrorObject> {
    let mut children = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..100 {
        let mut params = json!({"uri": uri});
        if let Some(c) = &cursor {
            params["cursor"] = json!(c);
        }
        let page = call(server, "resources/directory/read", params).await?;
        assert_eq!(page["resultType"], "complete");
        children.extend(page["resources"].as_array().unwrap().iter().cloned());
        match page["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => return Ok(children),
        }
    }
    panic!("the pages of {uri} do not end");
}

#[tokio::test]
async fn directories_list_their_direct_children() {
    let server = server(true);
    let root = directory(&server, "skill://pdf-processing").await.unwrap();
    let children: Vec<(&str, &str)> = root
        .iter()
        .map(|r| (r["uri"].as_str().unwrap(), r["mimeType"].as_str().unwrap()))
        .collect();
    assert_eq!(
        children,
        [
            ("skill://pdf-processing/SKILL.md", "text/markdown"),
            ("skill://pdf-processing/references", "inode/directory"),
            ("skill://pdf-processing/scripts", "inode/directory"),
            ("skill://pdf-processing/templates", "inode/directory"),
        ]
    );
    let templates = directory(&server, "skill://pdf-processing/templates")
        .await
        .unwrap();
    assert_eq!(
        templates,
        [
            json!({"name": "invoice.md", "uri": "skill://pdf-processing/templates/invoice.md", "mimeType": "text/markdown", "size": 10}),
            json!({"name": "regional", "uri": "skill://pdf-processing/templates/regional", "mimeType": "inode/directory"})
        ]
    );
    // The organizational prefix is a directory too, holding the skill's directory.
    let billing = directory(&server, "skill://acme/billing").await.unwrap();
    assert_eq!(billing[0]["uri"], "skill://acme/billing/refunds");
    for not_a_directory in [
        "skill://pdf-processing/SKILL.md",
        "skill://pdf-processing/",
        "skill://elsewhere",
    ] {
        let error = directory(&server, not_a_directory).await.unwrap_err();
        assert_eq!(error.code, ErrorCode::INVALID_PARAMS, "{not_a_directory}");
    }
    // Not declared, not served.
    let error = directory(&server_without_directories(), "skill://pdf-processing")
        .await
        .unwrap_err();
    assert_eq!(error.code, ErrorCode::METHOD_NOT_FOUND);
}

fn server_without_directories() -> Server {
    server(false)
}

#[tokio::test]
async fn directory_pages_hold_the_page_size() {
    let server = server(true);
    let first = ok(
        &server,
        "resources/directory/read",
        json!({"uri": "skill://pdf-processing"}),
    )
    .await;
    assert_eq!(first["resources"].as_array().unwrap().len(), 2);
    assert!(first["nextCursor"].is_string());
    let bad = call(
        &server,
        "resources/directory/read",
        json!({"uri": "skill://pdf-processing", "cursor": "bad"}),
    )
    .await
    .unwrap_err();
    assert_eq!(bad.code, ErrorCode::INVALID_PARAMS);
}

/// A fresh directory under the system's temporary directory, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let path = std::env::temp_dir().join(format!("mcp-skills-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        TempDir(path)
    }

    fn write(&self, relative: &str, bytes: &[u8]) {
        let path = self.0.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[tokio::test]
async fn skills_are_read_from_a_root_directory() {
    let dir = TempDir::new("root");
    dir.write(
        "outer/SKILL.md",
        b"---\nname: outer\ndescription: Outer\n---\n",
    );
    dir.write("outer/notes.txt", b"notes");
    dir.write(
        "outer/inner/SKILL.md",
        b"---\nname: inner\ndescription: Inner\n---\n",
    );
    dir.write("outer/.git/config", b"hidden");
    dir.write(
        "team/tools/lint/SKILL.md",
        b"---\nname: lint\ndescription: Lint\n---\n",
    );
    #[cfg(unix)]
    std::os::unix::fs::symlink("/etc/passwd", dir.0.join("outer/passwd")).unwrap();
    let skills = Skills::from_root(&dir.0).unwrap();
    let uris: Vec<&str> = skills.skills().iter().map(Skill::uri).collect();
    assert_eq!(
        uris,
        [
            "skill://outer/SKILL.md",
            "skill://outer/inner/SKILL.md",
            "skill://team/tools/lint/SKILL.md"
        ]
    );
    // The nested skill's files are files of the outer skill too; hidden files and links are not.
    let outer: Vec<String> = skills.skills()[0]
        .entry()
        .resources
        .files()
        .unwrap()
        .iter()
        .map(|f| f.uri.clone())
        .collect();
    assert_eq!(
        outer,
        [
            "skill://outer/SKILL.md",
            "skill://outer/inner/SKILL.md",
            "skill://outer/notes.txt"
        ]
    );
    let server = Server::builder("disk", "1.0")
        .skills(skills)
        .build()
        .unwrap();
    let inner = ok(
        &server,
        "resources/read",
        json!({"uri": "skill://outer/inner/SKILL.md"}),
    )
    .await;
    assert_eq!(
        bytes_of(&inner),
        b"---\nname: inner\ndescription: Inner\n---\n"
    );
    let inner = listed(&server, "skill://outer/inner/SKILL.md").await;
    assert_eq!(inner["name"], "inner");
}

#[test]
fn a_directory_with_a_bad_skill_is_refused() {
    let dir = TempDir::new("bad");
    dir.write(
        "Bad_Name/SKILL.md",
        b"---\nname: Bad_Name\ndescription: x\n---\n",
    );
    assert!(matches!(
        Skills::from_root(&dir.0),
        Err(mcp_server::Error::InvalidSkill { .. })
    ));
    assert!(matches!(
        Skill::from_dir("missing", dir.0.join("missing")),
        Err(mcp_server::Error::SkillIo { .. })
    ));
}

#[test]
fn conflicting_skills_and_resources_are_refused_at_build() {
    let mut other = Skill::builder("outer/inner")
        .file("SKILL.md", "---\nname: inner\ndescription: Other\n---\n")
        .build()
        .unwrap();
    let outer = Skill::builder("outer")
        .file("SKILL.md", "---\nname: outer\ndescription: Outer\n---\n")
        .file(
            "inner/SKILL.md",
            "---\nname: inner\ndescription: Inner\n---\n",
        )
        .build()
        .unwrap();
    let built = Server::builder("x", "1.0")
        .skills(Skills::new().skill(Ok(outer)).skill(Ok(other.clone())))
        .build();
    assert!(matches!(built, Err(mcp_server::Error::InvalidSkill { .. })));
    other = simple("git-workflow");
    let clash = mcp_server::ResourceDef::new("skill://git-workflow/SKILL.md", "x", |_, _| async {
        Ok(Vec::new())
    });
    let built = Server::builder("x", "1.0")
        .resource(clash)
        .skills(Skills::new().skill(Ok(other)))
        .build();
    assert!(matches!(built, Err(mcp_server::Error::Duplicate { .. })));
}
