//! The Skills extension inside the server (SEP-2640): `skills/list`, `skills/get` and
//! `resources/directory/read` over the skills of [`crate::skills`], and the resources that
//! serve their files. Everything a request needs is computed when the server is built:
//! each entry's JSON (with every file's digest and size), the index from `SKILL.md` URI to
//! entry, and every directory's children, so a request only looks up and pages.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, OnceLock, Weak};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use mcp_jsonrpc::ErrorObject;
use mcp_types::skills::{
    DIRECTORY_MIME_TYPE, EXTENSION_ID, GetSkillRequestParams, ReadDirectoryRequestParams,
    ReadDirectoryResult, SKILL_MD_MIME_TYPE, SkillsSettings, method as skill_method,
};
use mcp_types::{
    BlobResourceContents, CacheScope, EmbeddedResourceResource, JsonObject, PaginatedRequestParams,
    Resource, ResultMetaObject, ResultType, TextResourceContents,
};
use serde::Serialize;
use serde_json::value::RawValue;

use super::lists::page;
use super::{CacheKind, HasMeta, Inner, Server, invalid, parse, to_raw};
use crate::context::Context;
use crate::error::Error;
use crate::extension::Extension;
use crate::resource::ResourceDef;
use crate::skills::{ServedFile, Skills, encode_path};
use crate::tool::BoxFuture;

/// The methods without and with `directoryRead`.
const METHODS: [&str; 3] = [
    skill_method::SKILLS_LIST,
    skill_method::SKILLS_GET,
    skill_method::RESOURCES_DIRECTORY_READ,
];

/// The default number of entries or children in a page.
const PAGE_SIZE: usize = 100;

/// The extension's state in one server.
pub(crate) struct SkillsEngine {
    /// Each skill's entry, serialized once, in listing order.
    entries: Vec<Box<RawValue>>,
    /// The index of the entry of each `SKILL.md` URI.
    by_uri: HashMap<String, usize>,
    /// The direct children of every directory of the served namespaces.
    directories: HashMap<String, Vec<Resource>>,
    directory_read: bool,
    page_size: usize,
    server: OnceLock<Weak<Inner>>,
}

impl SkillsEngine {
    /// The engine for `skills`, and the resources serving their files (each URI once).
    pub(crate) fn new(skills: Skills) -> Result<(Self, Vec<ResourceDef>), Error> {
        if let Some(error) = skills.error {
            return Err(error);
        }
        // A registered skill's SKILL.md is described by its own frontmatter, also where it
        // is a file of an enclosing skill.
        let described: HashMap<&str, (&str, &str)> = skills
            .skills
            .iter()
            .map(|s| {
                let text = |k: &str| {
                    s.frontmatter
                        .get(k)
                        .and_then(|v| v.as_str())
                        .unwrap_or_default()
                };
                (s.uri.as_str(), (text("name"), text("description")))
            })
            .collect();
        let mut served: HashMap<&str, &Arc<[u8]>> = HashMap::new();
        let mut resources = Vec::new();
        let mut directories: BTreeMap<String, BTreeMap<String, Resource>> = BTreeMap::new();
        for skill in &skills.skills {
            for file in &skill.files {
                if let Some(bytes) = served.get(file.uri.as_str()) {
                    if **bytes != file.bytes {
                        return Err(Error::InvalidSkill {
                            skill: skill.path.clone(),
                            reason: format!(
                                "{} is served by another skill with other content",
                                file.uri
                            ),
                        });
                    }
                    continue;
                }
                served.insert(&file.uri, &file.bytes);
                let resource = resource_of(file, described.get(file.uri.as_str()).copied());
                index_directories(&mut directories, &skill.uri, &skill.path, file, &resource);
                resources.push(resource_def(file, resource));
            }
        }
        let entries = skills
            .skills
            .iter()
            .map(|s| mcp_json::to_raw_value(&s.entry()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| Error::InvalidSkill {
                skill: String::new(),
                reason: format!("cannot encode an entry: {e}"),
            })?;
        let by_uri = skills
            .skills
            .iter()
            .enumerate()
            .map(|(i, s)| (s.uri.clone(), i))
            .collect();
        let engine = SkillsEngine {
            entries,
            by_uri,
            directories: directories
                .into_iter()
                .map(|(dir, children)| (dir, children.into_values().collect()))
                .collect(),
            directory_read: skills.directory_read,
            page_size: skills.page_size.unwrap_or(PAGE_SIZE),
            server: OnceLock::new(),
        };
        Ok((engine, resources))
    }

    /// Ties the engine to the server it serves (for the cache policy and `_meta`).
    pub(crate) fn attach(&self, inner: &Arc<Inner>) {
        let _ = self.server.set(Arc::downgrade(inner));
    }

    fn serve(
        &self,
        server: &Server,
        method: &str,
        params: &str,
        cx: &Context,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let authenticated = cx.principal().is_some();
        match method {
            skill_method::SKILLS_LIST => {
                let cursor = parse::<PaginatedRequestParams>(params)?.cursor;
                let (range, next_cursor) =
                    page(self.entries.len(), cursor.as_deref(), self.page_size)?;
                let cache = server.cache_policy(CacheKind::Resources, authenticated);
                to_raw(&SkillsPage {
                    meta: server.result_meta(),
                    result_type: ResultType::Complete,
                    skills: self.entries[range].iter().map(AsRef::as_ref).collect(),
                    next_cursor,
                    ttl_ms: cache.ttl_ms,
                    cache_scope: cache.scope,
                })
            }
            skill_method::SKILLS_GET => {
                let params: GetSkillRequestParams = parse(params)?;
                let Some(&index) = self.by_uri.get(&params.uri) else {
                    return Err(invalid(format!("no skill at {:?}", params.uri))
                        .with_data(serde_json::json!({ "uri": params.uri })));
                };
                let cache = server.cache_policy(CacheKind::Read, authenticated);
                to_raw(&SkillOne {
                    meta: server.result_meta(),
                    result_type: ResultType::Complete,
                    skill: &self.entries[index],
                    ttl_ms: cache.ttl_ms,
                    cache_scope: cache.scope,
                })
            }
            skill_method::RESOURCES_DIRECTORY_READ if self.directory_read => {
                let params: ReadDirectoryRequestParams = parse(params)?;
                let Some(children) = self.directories.get(&params.uri) else {
                    return Err(invalid(format!("{:?} is not a directory", params.uri))
                        .with_data(serde_json::json!({ "uri": params.uri })));
                };
                let (range, next_cursor) =
                    page(children.len(), params.cursor.as_deref(), self.page_size)?;
                let cache = server.cache_policy(CacheKind::Resources, authenticated);
                let mut result = ReadDirectoryResult::new(children[range].to_vec());
                result.next_cursor = next_cursor;
                result.ttl_ms = Some(cache.ttl_ms);
                result.cache_scope = Some(cache.scope);
                server.complete(result)
            }
            other => Err(ErrorObject::method_not_found(other)),
        }
    }
}

impl HasMeta for ReadDirectoryResult {
    fn meta_mut(&mut self) -> &mut Option<ResultMetaObject> {
        &mut self.meta
    }
}

/// A `skills/list` page, assembled from the entries' JSON.
#[derive(Serialize)]
struct SkillsPage<'a> {
    #[serde(rename = "_meta")]
    meta: ResultMetaObject,
    #[serde(rename = "resultType")]
    result_type: ResultType,
    skills: Vec<&'a RawValue>,
    #[serde(rename = "nextCursor", skip_serializing_if = "Option::is_none")]
    next_cursor: Option<String>,
    #[serde(rename = "ttlMs")]
    ttl_ms: u64,
    #[serde(rename = "cacheScope")]
    cache_scope: CacheScope,
}

/// A `skills/get` result, from the entry's JSON.
#[derive(Serialize)]
struct SkillOne<'a> {
    #[serde(rename = "_meta")]
    meta: ResultMetaObject,
    #[serde(rename = "resultType")]
    result_type: ResultType,
    skill: &'a RawValue,
    #[serde(rename = "ttlMs")]
    ttl_ms: u64,
    #[serde(rename = "cacheScope")]
    cache_scope: CacheScope,
}

impl Extension for SkillsEngine {
    fn id(&self) -> &str {
        EXTENSION_ID
    }

    fn settings(&self) -> JsonObject {
        let mut settings = SkillsSettings::new();
        settings.directory_read = self.directory_read.then_some(true);
        match serde_json::to_value(settings) {
            Ok(serde_json::Value::Object(object)) => object,
            _ => JsonObject::new(),
        }
    }

    fn methods(&self) -> &[&'static str] {
        if self.directory_read {
            &METHODS
        } else {
            &METHODS[..2]
        }
    }

    /// The SEP ties the methods to the server's declaration only.
    fn requires_declaration(&self) -> bool {
        false
    }

    fn handle(
        &self,
        method: &str,
        params: Box<RawValue>,
        cx: Context,
    ) -> BoxFuture<Result<Box<RawValue>, ErrorObject>> {
        let result = match self.server.get().and_then(Weak::upgrade) {
            Some(inner) => self.serve(&Server { inner }, method, params.get(), &cx),
            None => Err(ErrorObject::internal("the server is gone")),
        };
        Box::pin(std::future::ready(result))
    }
}

/// The resource metadata of a file: a skill's `SKILL.md` named and described by its
/// frontmatter, any other file by its name.
fn resource_of(file: &ServedFile, skill_md: Option<(&str, &str)>) -> Resource {
    let last = file.path.rsplit('/').next().unwrap_or(&file.path);
    let mut resource = if let Some((name, description)) = skill_md {
        let mut r = Resource::new(name, &file.uri);
        r.description = Some(description.to_owned());
        r.mime_type = Some(SKILL_MD_MIME_TYPE.to_owned());
        r
    } else {
        let mut r = Resource::new(last, &file.uri);
        r.mime_type = Some(file.mime_type.clone());
        r
    };
    resource.size = i64::try_from(file.bytes.len()).ok();
    resource
}

/// The resource that serves `file`'s bytes: as text when they are UTF-8, else as a blob.
fn resource_def(file: &ServedFile, resource: Resource) -> ResourceDef {
    let bytes = Arc::clone(&file.bytes);
    let mime_type = resource.mime_type.clone();
    let mut def = ResourceDef::new(&file.uri, &resource.name, move |uri, _cx| {
        let contents = if let Ok(text) = std::str::from_utf8(&bytes) {
            let mut c = TextResourceContents::new(text, uri);
            c.mime_type.clone_from(&mime_type);
            EmbeddedResourceResource::TextResourceContents(c)
        } else {
            let mut c = BlobResourceContents::new(STANDARD.encode(&bytes), uri);
            c.mime_type.clone_from(&mime_type);
            EmbeddedResourceResource::BlobResourceContents(c)
        };
        std::future::ready(Ok(vec![contents]))
    });
    def.resource = resource;
    def
}

/// Records `file` and every directory above it, up to the first skill-path segment, as
/// children of their parents.
fn index_directories(
    directories: &mut BTreeMap<String, BTreeMap<String, Resource>>,
    skill_uri: &str,
    skill_path: &str,
    file: &ServedFile,
    resource: &Resource,
) {
    let scheme = skill_uri.split_once("://").map_or("", |(s, _)| s);
    let segments: Vec<&str> = skill_path.split('/').chain(file.path.split('/')).collect();
    let dir_uri = |n: usize| format!("{scheme}://{}", encode_path(&segments[..n].join("/")));
    for depth in 1..segments.len() {
        let (uri, child) = if depth + 1 == segments.len() {
            (file.uri.clone(), resource.clone())
        } else {
            let uri = dir_uri(depth + 1);
            let mut dir = Resource::new(segments[depth], &uri);
            dir.mime_type = Some(DIRECTORY_MIME_TYPE.to_owned());
            (uri, dir)
        };
        directories
            .entry(dir_uri(depth))
            .or_default()
            .entry(uri)
            .or_insert(child);
    }
}
