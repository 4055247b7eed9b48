//! The four lists: opaque cursors over the registry, with cache hints
//! (<https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/pagination>, <https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/caching>).

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use mcp_jsonrpc::ErrorObject;
use mcp_types::{
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, PaginatedRequestParams,
};
use serde::Serialize;
use serde_json::value::RawValue;

use super::{CacheKind, CachePolicy, HasMeta, Registry, Server, invalid, parse, read};

/// The range of one page of `len` items and the cursor of the next, from an opaque cursor
/// (`offset:N`, base64url); an invalid cursor is -32602.
pub(super) fn page(
    len: usize,
    cursor: Option<&str>,
    size: usize,
) -> Result<(std::ops::Range<usize>, Option<String>), ErrorObject> {
    let start = match cursor {
        None => 0,
        Some(cursor) => URL_SAFE_NO_PAD
            .decode(cursor)
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok())
            .and_then(|text| {
                text.strip_prefix("offset:")
                    .and_then(|n| n.parse::<usize>().ok())
            })
            .filter(|&n| n <= len)
            .ok_or_else(|| invalid("invalid cursor"))?,
    };
    let end = start.saturating_add(size).min(len);
    let next = (end < len).then(|| URL_SAFE_NO_PAD.encode(format!("offset:{end}")));
    Ok((start..end, next))
}

/// A list result: its items, its cursor and its cache hints.
trait Listing: Serialize + HasMeta {
    type Item;
    fn assemble(items: Vec<Self::Item>, next: Option<String>, cache: CachePolicy) -> Self;
}

macro_rules! listing {
    ($($t:ty => $item:ty),*) => {$(
        impl Listing for $t {
            type Item = $item;
            fn assemble(items: Vec<$item>, next: Option<String>, cache: CachePolicy) -> Self {
                let mut result = <$t>::new(items);
                result.next_cursor = next;
                result.ttl_ms = Some(cache.ttl_ms);
                result.cache_scope = Some(cache.scope);
                result
            }
        }
    )*};
}

listing!(
    ListPromptsResult => mcp_types::Prompt,
    ListResourcesResult => mcp_types::Resource,
    ListResourceTemplatesResult => mcp_types::ResourceTemplate
);

impl Server {
    fn cursor(params: &str) -> Result<Option<String>, ErrorObject> {
        Ok(parse::<PaginatedRequestParams>(params)?.cursor)
    }

    /// A page of one of the four lists, with its cursor and cache hints; only the page's
    /// items are cloned out of the registry.
    fn list<L: Listing>(
        &self,
        params: &str,
        authenticated: bool,
        kind: CacheKind,
        len: impl FnOnce(&Registry) -> usize,
        items: impl FnOnce(&Registry, std::ops::Range<usize>) -> Vec<L::Item>,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let cursor = Self::cursor(params)?;
        let registry = read(&self.inner.registry);
        let (range, next) = page(len(&registry), cursor.as_deref(), self.inner.page_size)?;
        let page = items(&registry, range);
        drop(registry);
        self.complete(L::assemble(
            page,
            next,
            self.cache_policy(kind, authenticated),
        ))
    }

    /// `tools/list`: the shape of `ListToolsResult`, assembled from each tool's JSON text
    /// (serialized once per tool, [`ToolDef::json`](crate::ToolDef)) rather than from
    /// clones of the definitions. Unless the client renders MCP Apps (`apps`), tools go
    /// without their `_meta.ui` link and app-only tools are left out (`crate::apps`); a
    /// page may then hold fewer items than the page size, and its cursor still counts
    /// registry positions, so no tool is skipped or repeated.
    pub(super) fn list_tools(
        &self,
        params: &str,
        authenticated: bool,
        apps: bool,
    ) -> Result<Box<RawValue>, ErrorObject> {
        #[derive(Serialize)]
        struct ToolsPage<'a> {
            #[serde(rename = "_meta")]
            meta: mcp_types::ResultMetaObject,
            #[serde(rename = "resultType")]
            result_type: mcp_types::ResultType,
            tools: Vec<&'a RawValue>,
            #[serde(rename = "nextCursor", skip_serializing_if = "Option::is_none")]
            next_cursor: Option<String>,
            #[serde(rename = "ttlMs")]
            ttl_ms: u64,
            #[serde(rename = "cacheScope")]
            cache_scope: mcp_types::CacheScope,
        }

        let cursor = Self::cursor(params)?;
        let registry = read(&self.inner.registry);
        let (range, next_cursor) = page(
            registry.tools.len(),
            cursor.as_deref(),
            self.inner.page_size,
        )?;
        let defs: Vec<_> = registry.tools[range].to_vec();
        drop(registry);
        let tools = defs
            .iter()
            .filter(|t| apps || !t.app_only())
            .map(|t| t.json(apps))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| ErrorObject::internal(format!("cannot encode a tool: {e}")))?;
        let cache = self.cache_policy(CacheKind::Tools, authenticated);
        mcp_json::to_raw_value(&ToolsPage {
            meta: self.result_meta(),
            result_type: mcp_types::ResultType::Complete,
            tools,
            next_cursor,
            ttl_ms: cache.ttl_ms,
            cache_scope: cache.scope,
        })
        .map_err(|e| ErrorObject::internal(format!("cannot encode the result: {e}")))
    }

    pub(super) fn list_prompts(
        &self,
        params: &str,
        authenticated: bool,
    ) -> Result<Box<RawValue>, ErrorObject> {
        self.list::<ListPromptsResult>(
            params,
            authenticated,
            CacheKind::Prompts,
            |r| r.prompts.len(),
            |r, range| r.prompts[range].iter().map(|p| p.prompt.clone()).collect(),
        )
    }

    /// `resources/list`; the UI resources of MCP Apps only for a client that renders
    /// apps (`apps`).
    pub(super) fn list_resources(
        &self,
        params: &str,
        authenticated: bool,
        apps: bool,
    ) -> Result<Box<RawValue>, ErrorObject> {
        self.list::<ListResourcesResult>(
            params,
            authenticated,
            CacheKind::Resources,
            |r| r.resources.len(),
            |r, range| {
                r.resources[range]
                    .iter()
                    .filter(|x| apps || !x.ui)
                    .map(|x| x.resource.clone())
                    .collect()
            },
        )
    }

    pub(super) fn list_templates(
        &self,
        params: &str,
        authenticated: bool,
    ) -> Result<Box<RawValue>, ErrorObject> {
        self.list::<ListResourceTemplatesResult>(
            params,
            authenticated,
            CacheKind::ResourceTemplates,
            |r| r.templates.len(),
            |r, range| {
                r.templates[range]
                    .iter()
                    .map(|t| t.template.clone())
                    .collect()
            },
        )
    }
}
