//! The client side of the MCP Apps extension (`io.modelcontextprotocol/ui`,
//! <https://modelcontextprotocol.io/extensions/apps/overview> and the extension's specification,
//! <https://github.com/modelcontextprotocol/ext-apps/blob/main/specification/2026-01-26/apps.mdx>): declaring that the client renders apps, reading a
//! tool's link to its UI, and fetching the UI resource checked for rendering.
//!
//! A client built with [`ClientBuilder::apps`] declares the extension with
//! `{"mimeTypes": ["text/html;profile=mcp-app"]}` on every request; servers then list
//! their tools' links (`_meta.ui`) and app-only tools, which they leave out for other
//! clients. [`UiLink::of`] reads a listed tool's link; [`Client::read_ui_resource`] reads
//! the `ui://` resource with `resources/read` and checks what the extension requires of
//! it (the `ui://` scheme, the app media type, HTML as text or base64), with its sandbox
//! metadata from the content item, or from the resource's listing entry when the content
//! has none (the specification's Metadata Location).
//!
//! Rendering is the embedding application's: the HTML goes in a sandboxed frame whose
//! content security policy allows no origin that [`ResourceUi::csp`] does not declare.
//!
//! ```no_run
//! # async fn run(client: mcp_client::Client) -> Result<(), mcp_client::Error> {
//! use mcp_client::apps::UiLink;
//!
//! for tool in client.list_tools_all().await? {
//!     if let Some(link) = UiLink::of(&tool) {
//!         let view = client.read_ui_resource(&link.resource_uri).await?;
//!         println!("{} renders with {} bytes of HTML", tool.name, view.html.len());
//!     }
//! }
//! # Ok(())
//! # }
//! ```

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use mcp_types::apps::{
    ClientSettings, EXTENSION_ID, MIME_TYPE, ToolUi, is_app_mime_type, is_ui_uri,
};
use mcp_types::{EmbeddedResourceResource, Tool};

pub use mcp_types::apps::{Csp, Permissions, ResourceUi, Visibility};

use crate::client::{Client, ClientBuilder};
use crate::error::Error;

/// A tool's link to the UI resource that renders its results.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct UiLink {
    /// The `ui://` resource to read and render.
    pub resource_uri: String,
    /// Who may see and call the tool (`model`, `app`, or both, the default).
    pub visibility: Vec<Visibility>,
}

impl UiLink {
    /// The link in `tool`'s `_meta.ui` (or the deprecated `_meta["ui/resourceUri"]`), if
    /// it names a `ui://` resource; a link to any other scheme is ignored, as the
    /// extension's host helpers refuse it.
    pub fn of(tool: &Tool) -> Option<UiLink> {
        let ui = ToolUi::of(tool)?;
        let uri = ui.resource_uri.as_deref()?;
        if !is_ui_uri(uri) {
            tracing::debug!(tool = %tool.name, uri, "ignoring a UI link outside the ui:// scheme");
            return None;
        }
        Some(UiLink {
            resource_uri: uri.to_owned(),
            visibility: ui.audiences(),
        })
    }

    /// Whether the model may see and call the tool.
    pub fn model_visible(&self) -> bool {
        self.visibility.contains(&Visibility::Model)
    }

    /// Whether the app rendered from the same server may call the tool.
    pub fn app_callable(&self) -> bool {
        self.visibility.contains(&Visibility::App)
    }
}

/// Whether a listed tool is for the model: true unless its `_meta.ui.visibility` leaves
/// `model` out (an app-only tool, which a host must not offer to the model). A tool
/// without the extension's metadata is for the model.
pub fn model_visible(tool: &Tool) -> bool {
    ToolUi::of(tool).is_none_or(|ui| ui.is_visible_to(Visibility::Model))
}

/// A UI resource, read and checked, ready for a sandboxed frame.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct UiView {
    /// The resource's `ui://` URI.
    pub uri: String,
    /// The HTML document.
    pub html: String,
    /// The sandbox and display metadata (`_meta.ui`): the content item's, else the
    /// listing entry's, else empty (hosts then apply the restrictive default policy).
    pub ui: ResourceUi,
}

impl ClientBuilder {
    /// Declares the MCP Apps extension (`io.modelcontextprotocol/ui`) with
    /// `{"mimeTypes": ["text/html;profile=mcp-app"]}` on every request: the client
    /// renders apps, so servers show it their tools' UI links, their app-only tools and
    /// their UI resources ([`crate::apps`]).
    #[must_use]
    pub fn apps(self) -> Self {
        self.extension(EXTENSION_ID, ClientSettings::mcp_apps().to_object())
    }
}

impl Client {
    /// Reads the UI resource at `uri` (`resources/read`) and checks it for rendering: a
    /// `ui://` URI (refused before any request otherwise), a content item for that URI of
    /// media type `text/html;profile=mcp-app`, its HTML as text or base64 UTF-8. The
    /// sandbox metadata is the content item's `_meta.ui`, or the listing entry's when the
    /// content has none.
    pub async fn read_ui_resource(&self, uri: &str) -> Result<UiView, Error> {
        let refuse = |reason: &str| Error::InvalidUiResource {
            uri: uri.to_owned(),
            reason: reason.to_owned(),
        };
        if !is_ui_uri(uri) {
            return Err(refuse("the URI does not use the ui:// scheme"));
        }
        let read = self.read_resource(uri).await?;
        let content = read
            .contents
            .iter()
            .find(|c| content_uri(c) == Some(uri))
            .ok_or_else(|| refuse("the server sent no content for this URI"))?;
        let (mime_type, html, meta) = match content {
            EmbeddedResourceResource::TextResourceContents(c) => {
                (c.mime_type.as_deref(), c.text.clone(), c.meta.as_ref())
            }
            EmbeddedResourceResource::BlobResourceContents(c) => {
                let bytes = STANDARD
                    .decode(c.blob.as_bytes())
                    .map_err(|_| refuse("the blob is not valid base64"))?;
                let html = String::from_utf8(bytes).map_err(|_| refuse("the HTML is not UTF-8"))?;
                (c.mime_type.as_deref(), html, c.meta.as_ref())
            }
            _ => return Err(refuse("the content is neither text nor a blob")),
        };
        match mime_type {
            Some(m) if is_app_mime_type(m) => {}
            other => {
                return Err(refuse(&format!(
                    "the media type is {other:?}, not {MIME_TYPE:?}"
                )));
            }
        }
        let ui = match ResourceUi::from_meta(meta) {
            Some(ui) => ui,
            None => self.listed_ui(uri).await?.unwrap_or_default(),
        };
        Ok(UiView {
            uri: uri.to_owned(),
            html,
            ui,
        })
    }

    /// The `_meta.ui` of the listing entry of `uri`, if the server lists it with one.
    async fn listed_ui(&self, uri: &str) -> Result<Option<ResourceUi>, Error> {
        let resources = self.list_resources_all().await?;
        Ok(resources
            .iter()
            .find(|r| r.uri == uri)
            .and_then(|r| ResourceUi::from_meta(r.meta.as_ref())))
    }
}

fn content_uri(content: &EmbeddedResourceResource) -> Option<&str> {
    match content {
        EmbeddedResourceResource::TextResourceContents(c) => Some(&c.uri),
        EmbeddedResourceResource::BlobResourceContents(c) => Some(&c.uri),
        _ => None,
    }
}
