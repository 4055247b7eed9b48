//! The MCP Apps extension (`io.modelcontextprotocol/ui`): tools whose results a host renders
//! with an interactive HTML interface (<https://modelcontextprotocol.io/extensions/apps/overview>,
//! <https://modelcontextprotocol.io/extensions/apps/build>, and the extension's specification,
//! <https://github.com/modelcontextprotocol/ext-apps/blob/main/specification/2026-01-26/apps.mdx>).
//!
//! A server declares a [`UiResource`]: a `ui://` URI, an HTML document served as
//! [`MIME_TYPE`] (`text/html;profile=mcp-app`), and the sandbox it needs (`_meta.ui`:
//! [`Csp`], [`Permissions`], a dedicated domain, a border preference), carried on both its
//! listing entry and its `resources/read` content. A tool links to it with
//! [`ToolDef::ui`](crate::ToolDef::ui) and a [`ToolUi`] (`_meta.ui.resourceUri`, and
//! `visibility`: `["app"]` for a tool only the app calls, such as a refresh button).
//! [`ServerBuilder::ui_resource`](crate::ServerBuilder::ui_resource) registers the resource
//! and declares the extension in `server/discover`; `build` refuses a link to a UI
//! resource the builder does not have ("Resource MUST exist on the server").
//!
//! Every request is judged on its own `_meta`. A request whose client capabilities declare
//! the extension with `mimeTypes` naming `text/html;profile=mcp-app` (see
//! [`Context::renders_apps`](crate::Context::renders_apps)) sees everything. Any other
//! gets the core protocol's fallback (the extensions overview, Graceful Degradation):
//!
//! - `tools/list` leaves out each tool's `_meta.ui` and the app-only tools (visibility
//!   without `model`), and `resources/list` the UI resources;
//! - `tools/call` of an app-only tool is refused as for an unknown tool (-32602);
//! - the result of a linked tool stays a plain result: `_meta.ui` and content blocks that
//!   point at `ui://` resources are taken out, and if no content is left the
//!   `structuredContent` is given as its JSON text (as <https://modelcontextprotocol.io/specification/2026-07-28/server/tools>
//!   asks of structured results), so the model always has text to read.
//!
//! Reading a UI resource by its URI is allowed to every client: it is a plain resource,
//! only not advertised.
//!
//! ```
//! use mcp_server::apps::{Csp, ToolUi, UiResource, Visibility};
//! use mcp_server::{Server, ToolDef};
//! use mcp_types::CallToolResult;
//!
//! let view = UiResource::new("ui://clock/view.html", "Clock", "<!DOCTYPE html><html>…</html>")?
//!     .csp(Csp::default())
//!     .prefers_border(true);
//! let now = ToolDef::new("now", serde_json::json!({"type": "object"}), |_, _| async {
//!     Ok(CallToolResult::text("12:00"))
//! })
//! .ui(ToolUi::new("ui://clock/view.html"));
//! let tick = ToolDef::new("tick", serde_json::json!({"type": "object"}), |_, _| async {
//!     Ok(CallToolResult::text("12:01"))
//! })
//! .ui(ToolUi::new("ui://clock/view.html").visibility([Visibility::App]));
//! let server = Server::builder("clock", "1.0")
//!     .ui_resource(view)
//!     .tool(now)
//!     .tool(tick)
//!     .build()?;
//! assert!(server.capabilities().extensions.as_ref().unwrap().contains_key(mcp_types::apps::EXTENSION_ID));
//! # Ok::<(), mcp_server::Error>(())
//! ```

use std::sync::Arc;

use mcp_types::apps::{ClientSettings, META_KEY, is_ui_uri};
use mcp_types::{
    CallToolResult, ContentBlock, EmbeddedResourceResource, JsonObject, RequestMetaObject,
    TextResourceContents,
};
use serde_json::Value;

pub use mcp_types::apps::{
    Csp, EXTENSION_ID, MIME_TYPE, Permissions, ResourceUi, ToolUi, Visibility,
};

use crate::error::Error;
use crate::resource::ResourceDef;

/// An MCP App's HTML document, served at a `ui://` URI as [`MIME_TYPE`].
#[derive(Debug, Clone)]
pub struct UiResource {
    uri: String,
    name: String,
    title: Option<String>,
    description: Option<String>,
    html: Arc<str>,
    ui: ResourceUi,
}

impl UiResource {
    /// The document `html` at `uri`, named `name`. A URI that does not use the `ui://`
    /// scheme is refused (the extension's Content Requirements).
    pub fn new(
        uri: impl Into<String>,
        name: impl Into<String>,
        html: impl Into<Arc<str>>,
    ) -> Result<Self, Error> {
        let uri = uri.into();
        check_ui_uri(&uri)?;
        Ok(UiResource {
            uri,
            name: name.into(),
            title: None,
            description: None,
            html: html.into(),
            ui: ResourceUi::default(),
        })
    }

    /// Sets the description.
    #[must_use]
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets the display title.
    #[must_use]
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets the origins the app may reach (`_meta.ui.csp`); without one, hosts apply
    /// their restrictive default (no network at all).
    #[must_use]
    pub fn csp(mut self, csp: Csp) -> Self {
        self.ui.csp = Some(csp);
        self
    }

    /// Sets the browser capabilities the app asks for (`_meta.ui.permissions`).
    #[must_use]
    pub fn permissions(mut self, permissions: Permissions) -> Self {
        self.ui.permissions = Some(permissions);
        self
    }

    /// Sets the dedicated sandbox origin (`_meta.ui.domain`), in the host's own format.
    #[must_use]
    pub fn domain(mut self, domain: impl Into<String>) -> Self {
        self.ui.domain = Some(domain.into());
        self
    }

    /// Says whether the app wants a visible border and background
    /// (`_meta.ui.prefersBorder`).
    #[must_use]
    pub fn prefers_border(mut self, prefers: bool) -> Self {
        self.ui.prefers_border = Some(prefers);
        self
    }

    /// The resource's URI.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// The `_meta.ui` it carries.
    pub fn ui(&self) -> &ResourceUi {
        &self.ui
    }

    /// The resource as the server registers it: the listing entry (with [`MIME_TYPE`] and
    /// `_meta.ui`) and a reader that answers the HTML with the same `_meta.ui`.
    pub(crate) fn into_def(self) -> ResourceDef {
        let meta = ui_meta(&self.ui);
        let html = Arc::clone(&self.html);
        let content_meta = meta.clone();
        let mut def = ResourceDef::new(self.uri, self.name, move |uri, _cx| {
            let mut content = TextResourceContents::new(&*html, uri);
            content.mime_type = Some(MIME_TYPE.to_owned());
            content.meta.clone_from(&content_meta);
            async move {
                Ok(vec![EmbeddedResourceResource::TextResourceContents(
                    content,
                )])
            }
        })
        .mime_type(MIME_TYPE);
        def.resource.meta = meta;
        def.resource.title = self.title;
        def.resource.description = self.description;
        def.ui = true;
        def
    }
}

/// `{"ui": …}` for a `_meta`, or `None` when there is nothing to say.
fn ui_meta(ui: &ResourceUi) -> Option<JsonObject> {
    if *ui == ResourceUi::default() {
        return None;
    }
    let value = serde_json::to_value(ui).ok()?;
    Some(JsonObject::from_iter([(META_KEY.to_owned(), value)]))
}

/// Refuses a URI outside the `ui://` scheme.
pub(crate) fn check_ui_uri(uri: &str) -> Result<(), Error> {
    if is_ui_uri(uri) {
        Ok(())
    } else {
        Err(Error::InvalidUiResource {
            uri: uri.to_owned(),
            reason: "a UI resource URI must use the ui:// scheme",
        })
    }
}

/// Whether the request's client declared the extension with the app media type.
pub(crate) fn renders_apps(meta: &RequestMetaObject) -> bool {
    ClientSettings::of(&meta.client_capabilities).is_some_and(|s| s.renders_apps())
}

/// The tool definition with its link in `_meta.ui`, as a client that renders apps sees
/// it (other keys of the tool's `_meta` kept).
pub(crate) fn linked_tool(tool: &mcp_types::Tool, ui: &ToolUi) -> mcp_types::Tool {
    let mut tool = tool.clone();
    let value = serde_json::to_value(ui).unwrap_or_else(|_| Value::Object(JsonObject::new()));
    tool.meta
        .get_or_insert_with(JsonObject::new)
        .insert(META_KEY.to_owned(), value);
    tool
}

/// Whether a content block points at a `ui://` resource (a link or an embedded copy).
fn points_at_ui(block: &ContentBlock) -> bool {
    match block {
        ContentBlock::ResourceLink(link) => is_ui_uri(&link.uri),
        ContentBlock::EmbeddedResource(embedded) => match &embedded.resource {
            EmbeddedResourceResource::TextResourceContents(c) => is_ui_uri(&c.uri),
            EmbeddedResourceResource::BlobResourceContents(c) => is_ui_uri(&c.uri),
            _ => false,
        },
        _ => false,
    }
}

/// A linked tool's result for a client that does not render apps: no `_meta.ui`, no
/// blocks pointing at `ui://` resources, and text to read (the structured content's JSON
/// when nothing else is left).
pub(crate) fn plain_result(mut result: CallToolResult) -> CallToolResult {
    if let Some(meta) = result.meta.as_mut() {
        meta.extra.remove(META_KEY);
    }
    result.content.retain(|block| !points_at_ui(block));
    if result.content.is_empty()
        && let Some(structured) = &result.structured_content
        && let Ok(text) = serde_json::to_string(structured)
    {
        result.content.push(ContentBlock::text(text));
    }
    result
}

impl crate::ToolDef {
    /// Links the tool to a UI resource (`_meta.ui`: `resourceUri` and `visibility`),
    /// shown only to clients that render apps (see [`crate::apps`]). A `resourceUri` that
    /// is missing or not a `ui://` URI makes the definition unusable
    /// ([`check`](crate::ToolDef::check)).
    #[must_use]
    pub fn ui(mut self, link: ToolUi) -> Self {
        let checked = match link.resource_uri.as_deref() {
            Some(uri) => check_ui_uri(uri),
            None => Err(Error::InvalidUiResource {
                uri: String::new(),
                reason: "a tool's UI link needs a resourceUri",
            }),
        };
        if let Err(defect) = checked {
            self.defect.get_or_insert_with(|| Arc::new(defect));
            return self;
        }
        self.ui = Some(Arc::new(link));
        self.json = std::sync::OnceLock::new();
        self.json_ui = std::sync::OnceLock::new();
        self
    }

    /// The tool's UI link, if it has one.
    pub fn ui_link(&self) -> Option<&ToolUi> {
        self.ui.as_deref()
    }

    /// Whether only the app may call the tool (a link whose visibility lacks `model`).
    pub(crate) fn app_only(&self) -> bool {
        self.ui
            .as_deref()
            .is_some_and(|ui| !ui.is_visible_to(Visibility::Model))
    }
}

#[cfg(test)]
mod tests {
    use mcp_types::{CallToolResult, ContentBlock};
    use serde_json::json;

    use super::{UiResource, plain_result};

    #[test]
    fn ui_resource_uris_must_use_the_ui_scheme() {
        assert!(UiResource::new("ui://a/b.html", "a", "<html></html>").is_ok());
        for bad in ["https://a/b.html", "ui://", "ui:/a", "file:///a.html", ""] {
            assert!(UiResource::new(bad, "a", "").is_err(), "{bad}");
        }
    }

    #[test]
    fn a_plain_result_keeps_text_and_loses_what_points_at_the_ui() {
        let mut result = CallToolResult::text("sunny");
        result.content.push(ContentBlock::resource_link(
            "ui://weather/view.html",
            "view",
        ));
        result
            .content
            .push(ContentBlock::resource_link("file:///data.csv", "data"));
        let plain = plain_result(result);
        assert_eq!(plain.content.len(), 2);
        assert_eq!(plain.content[0], ContentBlock::text("sunny"));

        // Nothing but a link to the view and structured data: the data becomes the text.
        let mut result = CallToolResult::structured(json!({"t": 21}));
        result.content = vec![ContentBlock::resource_link("ui://w/v", "v")];
        let plain = plain_result(result);
        assert_eq!(plain.content, [ContentBlock::text(r#"{"t":21}"#)]);
    }
}
