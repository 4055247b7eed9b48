//! The Skills extension end to end: our server with skills, answered by our client over
//! the engine's in-memory duplex, through a handler that records what the client asked
//! and, for the hostile cases, tampers with what the server answered.

use std::sync::{Arc, Mutex};

use mcp_client::skills::MAX_SKILL_PAGES;
use mcp_client::{Client, Error, SkillErrorKind};
use mcp_jsonrpc::{ErrorObject, Handler, Request, RequestContext};
use mcp_server::Server;
use mcp_server::skills::{Skill, Skills};
use mcp_test_support::client::connect_in_memory;
use mcp_types::ErrorCode;
use serde_json::Value;
use serde_json::value::RawValue;

const PDF_MD: &str = "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\nmetadata:\n  version: 2.1.0\n---\n\nSkill body.\n";

/// How the handler changes the server's answers.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Tamper {
    None,
    /// Same size, other bytes in the served SKILL.md.
    Digest,
    /// Bytes appended to the served SKILL.md.
    Size,
    /// The listed entry's description differs from the file's (the manifest still matches
    /// the file).
    Frontmatter,
    /// `skills/list` never stops handing out new cursors.
    EndlessCursors,
}

/// The server behind a recorder of every request (method and `uri`) and a tamperer.
struct Spy {
    server: Server,
    tamper: Tamper,
    seen: Arc<Mutex<Vec<String>>>,
}

impl Handler for Spy {
    async fn request(
        &self,
        request: Request,
        cx: RequestContext,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let params: Value = request
            .params
            .as_ref()
            .map(|p| serde_json::from_str(p.text()).unwrap())
            .unwrap_or_default();
        let method = request.method.clone();
        let uri = params["uri"].as_str().unwrap_or_default().to_owned();
        self.seen
            .lock()
            .unwrap()
            .push(format!("{method} {uri}").trim().to_owned());
        let request = if self.tamper == Tamper::EndlessCursors && method == "skills/list" {
            // The server would refuse the made-up cursors: ask it for the first page again.
            let mut params = params.clone();
            params.as_object_mut().unwrap().remove("cursor");
            let params = serde_json::value::to_raw_value(&params).unwrap();
            Request::new(request.id, method.clone(), Some(params))
        } else {
            request
        };
        let raw = self.server.handle(request, cx).await?;
        let mut result: Value = serde_json::from_str(raw.get()).unwrap();
        match (self.tamper, method.as_str()) {
            (Tamper::Digest, "resources/read") if uri.ends_with("SKILL.md") => {
                let text = result["contents"][0]["text"]
                    .as_str()
                    .unwrap()
                    .replace("Skill body.", "Evil body!!");
                result["contents"][0]["text"] = Value::from(text);
            }
            (Tamper::Size, "resources/read") if uri.ends_with("SKILL.md") => {
                let text = format!("{}extra\n", result["contents"][0]["text"].as_str().unwrap());
                result["contents"][0]["text"] = Value::from(text);
            }
            (Tamper::Frontmatter, "skills/list") => {
                result["skills"][0]["frontmatter"]["description"] =
                    Value::from("Exfiltrate credentials");
            }
            (Tamper::EndlessCursors, "skills/list") => {
                let n = self.seen.lock().unwrap().len();
                result["nextCursor"] = Value::from(format!("page-{n}"));
            }
            _ => {}
        }
        Ok(serde_json::value::to_raw_value(&result).unwrap())
    }
}

struct Fixture {
    client: Client,
    seen: Arc<Mutex<Vec<String>>>,
    _connections: (mcp_jsonrpc::Connection, mcp_jsonrpc::Connection),
}

impl Fixture {
    fn reads(&self) -> Vec<String> {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .filter(|s| s.starts_with("resources/read"))
            .cloned()
            .collect()
    }
}

fn skills(directory_read: bool) -> Skills {
    let pdf = Skill::builder("pdf-processing")
        .file("SKILL.md", PDF_MD)
        .file("references/FORMS.md", "Supporting content.\n")
        .file("scripts/blob.bin", vec![0u8, 0xff, 0x10]);
    let simple = |path: &str| {
        let name = path.rsplit('/').next().unwrap();
        Skill::builder(path)
            .file(
                "SKILL.md",
                format!("---\nname: {name}\ndescription: The {name} skill\n---\n"),
            )
            .build()
    };
    Skills::new()
        .skill(pdf.build())
        .skill(simple("git-workflow"))
        .skill(simple("acme/billing/refunds"))
        .directory_read(directory_read)
        .page_size(1)
}

fn fixture(tamper: Tamper, directory_read: bool) -> Fixture {
    let server = Server::builder("skills", "1.0")
        .skills(skills(directory_read))
        .build()
        .unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let spy = Spy {
        server,
        tamper,
        seen: Arc::clone(&seen),
    };
    let (client, client_conn, server_conn) = connect_in_memory(spy, Client::builder("c", "1"), 64);
    Fixture {
        client,
        seen,
        _connections: (client_conn, server_conn),
    }
}

fn skill_error(result: Result<impl std::fmt::Debug, Error>) -> SkillErrorKind {
    match result {
        Err(Error::Skill(e)) => e,
        other => panic!("expected a skill error, got {other:?}"),
    }
}

#[tokio::test]
async fn listing_reads_no_file_and_loading_reads_only_what_is_asked() {
    let f = fixture(Tamper::None, true);
    let settings = f.client.skills_settings().await.unwrap().unwrap();
    assert!(settings.directory_read());
    // Three pages of one whole entry each.
    let page = f.client.list_skills(None).await.unwrap();
    assert_eq!(page.skills.len(), 1);
    assert!(page.next_cursor.is_some());
    let skills = f.client.list_skills_all().await.unwrap();
    let names: Vec<_> = skills.iter().map(|s| s.name().unwrap()).collect();
    assert_eq!(names, ["pdf-processing", "git-workflow", "refunds"]);
    assert!(f.reads().is_empty(), "listing fetched {:?}", f.reads());

    let skill = f.client.load_skill(&skills[0]).await.unwrap();
    assert_eq!(skill.skill_md().text(), Some(PDF_MD));
    assert!(skill.skill_md().verified());
    assert_eq!(
        f.reads(),
        ["resources/read skill://pdf-processing/SKILL.md"]
    );

    let forms = f
        .client
        .read_skill_file(&skill, "references/FORMS.md")
        .await
        .unwrap();
    assert_eq!(forms.text(), Some("Supporting content.\n"));
    let blob = f
        .client
        .read_skill_file(&skill, "skill://pdf-processing/scripts/blob.bin")
        .await
        .unwrap();
    assert_eq!(blob.bytes(), [0u8, 0xff, 0x10]);
    // A file the manifest does not list is refused without a request.
    let before = f.reads().len();
    let unlisted = f
        .client
        .read_skill_file(&skill, "references/SECRET.md")
        .await;
    assert!(matches!(
        skill_error(unlisted),
        SkillErrorKind::NotListed { .. }
    ));
    assert_eq!(f.reads().len(), before);

    // skills/get for a served skill, -32602 for any other URI.
    let got = f
        .client
        .get_skill("skill://acme/billing/refunds/SKILL.md")
        .await
        .unwrap();
    assert_eq!(got, skills[2]);
    match f.client.get_skill("skill://nowhere/SKILL.md").await {
        Err(Error::Protocol(e)) => assert_eq!(e.code, ErrorCode::INVALID_PARAMS),
        other => panic!("{other:?}"),
    }
    let dir = f
        .client
        .read_directory("skill://pdf-processing", None)
        .await
        .unwrap();
    assert_eq!(dir.resources.len(), 1);
}

#[tokio::test]
async fn directory_reads_need_the_servers_declaration() {
    let f = fixture(Tamper::None, false);
    let refused = f
        .client
        .read_directory("skill://pdf-processing", None)
        .await;
    assert_eq!(
        skill_error(refused),
        SkillErrorKind::DirectoryReadNotDeclared
    );
    assert!(
        !f.seen
            .lock()
            .unwrap()
            .iter()
            .any(|s| s.starts_with("resources/directory/read")),
        "the call was sent"
    );
}

/// Loads the first listed skill from a tampering server: refused, with the one SKILL.md
/// read and nothing after it.
async fn refused(tamper: Tamper) -> SkillErrorKind {
    let f = fixture(tamper, false);
    let skills = f.client.list_skills_all().await.unwrap();
    let error = skill_error(f.client.load_skill(&skills[0]).await);
    assert_eq!(
        f.reads(),
        ["resources/read skill://pdf-processing/SKILL.md"]
    );
    error
}

#[tokio::test]
async fn a_tampered_skill_md_is_refused() {
    assert!(matches!(
        refused(Tamper::Digest).await,
        SkillErrorKind::DigestMismatch { .. }
    ));
}

#[tokio::test]
async fn a_skill_md_of_the_wrong_size_is_refused() {
    assert!(matches!(
        refused(Tamper::Size).await,
        SkillErrorKind::SizeMismatch { expected, actual, .. } if actual == expected + 6
    ));
}

#[tokio::test]
async fn a_frontmatter_unlike_the_entrys_is_refused() {
    assert_eq!(
        refused(Tamper::Frontmatter).await,
        SkillErrorKind::FrontmatterMismatch {
            uri: "skill://pdf-processing/SKILL.md".to_owned(),
            field: "description".to_owned()
        }
    );
}

#[tokio::test]
async fn endless_listings_stop() {
    let f = fixture(Tamper::EndlessCursors, false);
    let error = skill_error(f.client.list_skills_all().await);
    assert_eq!(error, SkillErrorKind::TooManyPages(MAX_SKILL_PAGES));
}
