//! The four lists: opaque cursors over the registry, with cache hints
//! (<https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/pagination>, <https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/caching>).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

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

/// Which page of `tools/list`, for whom: what a kept page depends on besides the
/// registry.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct PageKey {
    start: usize,
    apps: bool,
    authenticated: bool,
    legacy: bool,
}

/// The pages of `tools/list` written since the registry last changed: a listing is
/// written once per change of the tool set, and each request copies it out.
#[derive(Default)]
pub(super) struct Pages(Mutex<HashMap<PageKey, Arc<Box<RawValue>>>>);

impl Pages {
    fn get(&self, key: &PageKey) -> Option<Arc<Box<RawValue>>> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(key)
            .cloned()
    }

    fn put(&self, key: PageKey, page: Arc<Box<RawValue>>) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key, page);
    }

    /// Forgets every page (the registry changed).
    pub(super) fn clear(&mut self) {
        self.0
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }
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

        /// The same page for a client of the initialize era, which knows none of the
        /// modern members.
        #[derive(Serialize)]
        struct LegacyToolsPage<'a> {
            tools: Vec<&'a RawValue>,
            #[serde(rename = "nextCursor", skip_serializing_if = "Option::is_none")]
            next_cursor: Option<String>,
        }

        let cursor = Self::cursor(params)?;
        let legacy = crate::trace::in_legacy_session();
        // Read, not copied, for as long as the page is written: a change waits, and so
        // a page kept is always the registry's.
        let registry = read(&self.inner.registry);
        let (range, next_cursor) = page(
            registry.tools.len(),
            cursor.as_deref(),
            self.inner.page_size,
        )?;
        let key = PageKey {
            start: range.start,
            apps,
            authenticated,
            legacy,
        };
        // Only the pages this server's own cursors begin are kept: any other offset a
        // client makes up is written each time, so what is kept stays bounded.
        let kept = range.start % self.inner.page_size.max(1) == 0;
        let page = if let Some(page) = kept.then(|| registry.tool_pages.get(&key)).flatten() {
            page
        } else {
            let tools = registry.tools[range]
                .iter()
                .filter(|t| apps || !t.app_only())
                .map(|t| t.json(apps))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| ErrorObject::internal(format!("cannot encode a tool: {e}")))?;
            let written = if legacy {
                mcp_json::to_raw_value(&LegacyToolsPage { tools, next_cursor })
            } else {
                let cache = self.cache_policy(CacheKind::Tools, authenticated);
                mcp_json::to_raw_value(&ToolsPage {
                    meta: self.result_meta(),
                    result_type: mcp_types::ResultType::Complete,
                    tools,
                    next_cursor,
                    ttl_ms: cache.ttl_ms,
                    cache_scope: cache.scope,
                })
            }
            .map_err(|e| ErrorObject::internal(format!("cannot encode the result: {e}")))?;
            let page = Arc::new(written);
            if kept {
                registry.tool_pages.put(key, Arc::clone(&page));
            }
            page
        };
        drop(registry);
        if legacy {
            crate::trace::mark_shaped();
        }
        Ok(Box::clone(&page))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ToolDef;
    use mcp_types::CallToolResult;

    fn tool(name: &str) -> ToolDef {
        ToolDef::new(name, serde_json::json!({"type": "object"}), |_, _| async {
            Ok(CallToolResult::text(""))
        })
    }

    fn names(page: &RawValue) -> Vec<String> {
        let page: serde_json::Value = serde_json::from_str(page.get()).unwrap();
        page["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    }

    const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

    fn first() -> String {
        format!("{{{META}}}")
    }

    fn at(offset: usize) -> String {
        let cursor = URL_SAFE_NO_PAD.encode(format!("offset:{offset}"));
        format!(r#"{{{META},"cursor":"{cursor}"}}"#)
    }

    fn kept(server: &Server) -> usize {
        read(&server.inner.registry)
            .tool_pages
            .0
            .lock()
            .unwrap()
            .len()
    }

    #[test]
    fn pages_are_kept_until_the_tools_change_and_only_at_the_server_s_own_offsets() {
        let server = Server::builder("pages", "1")
            .page_size(2)
            .tool(tool("a"))
            .tool(tool("b"))
            .tool(tool("c"))
            .build()
            .unwrap();
        assert_eq!(
            names(&server.list_tools(&first(), false, false).unwrap()),
            ["a", "b"]
        );
        assert_eq!(kept(&server), 1);
        // The same page again is the kept one, with the same text.
        let again = server.list_tools(&first(), false, false).unwrap();
        assert_eq!(names(&again), ["a", "b"]);
        assert_eq!(kept(&server), 1);
        // For another audience, a page of its own.
        server.list_tools(&first(), true, false).unwrap();
        assert_eq!(kept(&server), 2);
        // A made-up offset is served, and not kept.
        assert_eq!(
            names(&server.list_tools(&at(1), false, false).unwrap()),
            ["b", "c"]
        );
        assert_eq!(kept(&server), 2);
        assert_eq!(
            names(&server.list_tools(&at(2), false, false).unwrap()),
            ["c"]
        );
        assert_eq!(kept(&server), 3);
        // A change of the tools forgets every page.
        server.add_tool(tool("d")).unwrap();
        assert_eq!(kept(&server), 0);
        assert_eq!(
            names(&server.list_tools(&at(2), false, false).unwrap()),
            ["c", "d"]
        );
        assert!(server.remove_tool("a"));
        assert_eq!(
            names(&server.list_tools(&first(), false, false).unwrap()),
            ["b", "c"]
        );
    }

    #[tokio::test]
    async fn an_initialize_era_session_gets_its_own_page_shape() {
        let server = Server::builder("pages", "1")
            .tool(tool("a"))
            .build()
            .unwrap();
        let (page, shaped) = crate::trace::in_session_shaped("2025-11-25", async {
            server.list_tools(&first(), false, false).unwrap()
        })
        .await;
        assert!(shaped);
        let page: serde_json::Value = serde_json::from_str(page.get()).unwrap();
        assert_eq!(
            page,
            serde_json::json!({"tools": [{"name": "a", "inputSchema": {"type": "object"}}]})
        );
        // The modern page is another, and says it is not the legacy one.
        let (modern, shaped) =
            crate::trace::in_session_shaped("2025-11-25", async { server.discover().unwrap() })
                .await;
        assert!(!shaped, "{}", modern.get());
        let page: serde_json::Value =
            serde_json::from_str(server.list_tools(&first(), false, false).unwrap().get()).unwrap();
        assert_eq!(page["resultType"], "complete");
        assert_eq!(
            page["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
            "pages"
        );
        assert!(page.get("ttlMs").is_some());
    }
}
