//! The MCP Apps extension's data (`io.modelcontextprotocol/ui`), written by hand from
//! <https://modelcontextprotocol.io/extensions/apps/overview> and the extension's specification
//! (<https://github.com/modelcontextprotocol/ext-apps/blob/main/specification/2026-01-26/apps.mdx>, SEP-1865): what a tool's and a UI resource's
//! `_meta.ui` hold, and the settings a client declares.
//!
//! A server links a tool to a UI resource with [`ToolUi`] under the tool's `_meta.ui`
//! (`resourceUri`, a `ui://` URI, and `visibility`); the resource is an HTML document of
//! media type [`MIME_TYPE`] whose listing entry and `resources/read` content item may carry
//! [`ResourceUi`] under `_meta.ui` (a content security policy, [`Csp`]; sandbox
//! [`Permissions`]; a dedicated `domain`; `prefersBorder`). A client that renders apps
//! declares the extension with [`ClientSettings`] (`mimeTypes`).
//!
//! Like the generated types these are passive data: every struct is `#[non_exhaustive]`,
//! optional members are skipped when `None`, and members this version does not know are
//! kept in `extra` so they survive a round trip. Whether a URI is a `ui://` URI
//! ([`is_ui_uri`]) and whether a media type is the app profile ([`is_app_mime_type`]) are
//! pure checks offered here so that the server and the client apply the same rule.
//!
//! ```
//! use mcp_types::apps::{ToolUi, Visibility};
//!
//! let tool: mcp_types::Tool = serde_json::from_value(serde_json::json!({
//!     "name": "refresh_dashboard",
//!     "inputSchema": {"type": "object"},
//!     "_meta": {"ui": {"resourceUri": "ui://weather-server/dashboard-template", "visibility": ["app"]}}
//! }))?;
//! let ui = ToolUi::of(&tool).unwrap();
//! assert_eq!(ui.resource_uri.as_deref(), Some("ui://weather-server/dashboard-template"));
//! assert!(ui.is_visible_to(Visibility::App));
//! assert!(!ui.is_visible_to(Visibility::Model));
//! # Ok::<(), serde_json::Error>(())
//! ```

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::{JsonObject, Tool};

/// The extension's identifier, the key under `capabilities.extensions`.
pub const EXTENSION_ID: &str = "io.modelcontextprotocol/ui";

/// The media type of an MCP App's HTML document.
pub const MIME_TYPE: &str = "text/html;profile=mcp-app";

/// The key under a tool's or a resource's `_meta` that holds the extension's metadata.
pub const META_KEY: &str = "ui";

/// The deprecated flat key (`_meta["ui/resourceUri"]`) that early servers used for the
/// tool's resource URI; read as a fallback, never written.
pub const LEGACY_RESOURCE_URI_KEY: &str = "ui/resourceUri";

/// The scheme every UI resource URI uses.
pub const URI_SCHEME: &str = "ui://";

/// Whether `uri` is a UI resource URI: the `ui://` scheme (matched without regard to
/// case, as URI schemes are) followed by something.
///
/// ```
/// use mcp_types::apps::is_ui_uri;
/// assert!(is_ui_uri("ui://weather/view.html"));
/// assert!(is_ui_uri("UI://weather"));
/// assert!(!is_ui_uri("ui://"));
/// assert!(!is_ui_uri("https://example.com/app.html"));
/// ```
pub fn is_ui_uri(uri: &str) -> bool {
    uri.len() > URI_SCHEME.len()
        && uri
            .get(..URI_SCHEME.len())
            .is_some_and(|scheme| scheme.eq_ignore_ascii_case(URI_SCHEME))
}

/// Whether `mime_type` is [`MIME_TYPE`]: `text/html` (any case) with a `profile`
/// parameter of `mcp-app`, allowing the whitespace and quoting RFC 9110 allows
/// (`text/html; profile="mcp-app"`), and other parameters beside it.
///
/// ```
/// use mcp_types::apps::is_app_mime_type;
/// assert!(is_app_mime_type("text/html;profile=mcp-app"));
/// assert!(is_app_mime_type("Text/HTML; charset=utf-8; profile=\"mcp-app\""));
/// assert!(!is_app_mime_type("text/html"));
/// assert!(!is_app_mime_type("text/plain;profile=mcp-app"));
/// ```
pub fn is_app_mime_type(mime_type: &str) -> bool {
    let mut parts = mime_type.split(';');
    let essence = parts.next().unwrap_or_default().trim();
    if !essence.eq_ignore_ascii_case("text/html") {
        return false;
    }
    parts.any(|parameter| {
        let Some((name, value)) = parameter.split_once('=') else {
            return false;
        };
        let value = value.trim();
        let value = value
            .strip_prefix('"')
            .and_then(|v| v.strip_suffix('"'))
            .unwrap_or(value);
        name.trim().eq_ignore_ascii_case("profile") && value == "mcp-app"
    })
}

/// Who may see and call a tool (`_meta.ui.visibility`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Visibility {
    /// The tool is visible to and callable by the model (the agent).
    Model,
    /// The tool is callable by the app rendered from the same server.
    App,
}

impl Visibility {
    /// The value as it appears on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Visibility::Model => "model",
            Visibility::App => "app",
        }
    }
}

/// Reads a visibility list, skipping values this version does not know (a later
/// revision may add audiences; a list that names only unknown ones then reads as empty,
/// visible to nobody this version knows, which is the cautious reading).
fn known_visibility<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<Visibility>>, D::Error> {
    let values = Option::<Vec<Value>>::deserialize(d)?;
    Ok(values.map(|values| {
        values
            .into_iter()
            .filter_map(|v| serde_json::from_value(v).ok())
            .collect()
    }))
}

/// A tool's link to its UI (`_meta.ui` of a tool).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolUi {
    /// The `ui://` resource that renders the tool's results.
    #[serde(
        rename = "resourceUri",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub resource_uri: Option<String>,
    /// Who may see and call the tool; absent means `["model", "app"]`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "known_visibility"
    )]
    pub visibility: Option<Vec<Visibility>>,
    /// Members this version does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ToolUi {
    /// A link to the resource at `resource_uri`, visible to the model and the app.
    pub fn new(resource_uri: impl Into<String>) -> Self {
        ToolUi {
            resource_uri: Some(resource_uri.into()),
            ..ToolUi::default()
        }
    }

    /// Sets who may see and call the tool.
    #[must_use]
    pub fn visibility(mut self, audiences: impl IntoIterator<Item = Visibility>) -> Self {
        self.visibility = Some(audiences.into_iter().collect());
        self
    }

    /// The tool's `_meta.ui`, or, failing that, the deprecated `_meta["ui/resourceUri"]`;
    /// `None` when neither is there or `_meta.ui` is not an object of this shape.
    pub fn of(tool: &Tool) -> Option<ToolUi> {
        let meta = tool.meta.as_ref()?;
        let mut ui = match meta.get(META_KEY) {
            Some(value) => serde_json::from_value::<ToolUi>(value.clone()).ok()?,
            None => ToolUi::default(),
        };
        if ui.resource_uri.is_none() {
            ui.resource_uri = meta
                .get(LEGACY_RESOURCE_URI_KEY)
                .and_then(Value::as_str)
                .map(str::to_owned);
        }
        (ui != ToolUi::default()).then_some(ui)
    }

    /// The audiences, with the default (`model` and `app`) when absent.
    pub fn audiences(&self) -> Vec<Visibility> {
        self.visibility
            .clone()
            .unwrap_or_else(|| vec![Visibility::Model, Visibility::App])
    }

    /// Whether `audience` may see the tool (absent `visibility` means everybody).
    pub fn is_visible_to(&self, audience: Visibility) -> bool {
        self.visibility
            .as_ref()
            .is_none_or(|list| list.contains(&audience))
    }
}

/// The origins an app may reach (`_meta.ui.csp` of a UI resource). Each list absent or
/// empty means none: hosts build a restrictive policy and never allow an origin that is
/// not declared.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Csp {
    /// Origins for `fetch`, XHR and WebSocket (`connect-src`).
    #[serde(
        rename = "connectDomains",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub connect_domains: Option<Vec<String>>,
    /// Origins for scripts, styles, images, fonts and media (`script-src`, `style-src`,
    /// `img-src`, `font-src`, `media-src`); `https://*.example.com` wildcards allowed.
    #[serde(
        rename = "resourceDomains",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub resource_domains: Option<Vec<String>>,
    /// Origins for nested frames (`frame-src`).
    #[serde(
        rename = "frameDomains",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub frame_domains: Option<Vec<String>>,
    /// Allowed base URIs of the document (`base-uri`).
    #[serde(
        rename = "baseUriDomains",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub base_uri_domains: Option<Vec<String>>,
    /// Members this version does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Browser capabilities an app asks for (`_meta.ui.permissions`); each present member
/// (an empty object) is a request the host may grant or refuse.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Permissions {
    /// The camera (Permission Policy `camera`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub camera: Option<JsonObject>,
    /// The microphone (`microphone`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub microphone: Option<JsonObject>,
    /// The location (`geolocation`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub geolocation: Option<JsonObject>,
    /// Writing to the clipboard (`clipboard-write`).
    #[serde(
        rename = "clipboardWrite",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub clipboard_write: Option<JsonObject>,
    /// Members this version does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// How a UI resource is to be sandboxed and shown (`_meta.ui` of a UI resource's listing
/// entry or `resources/read` content item; the content item's wins).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ResourceUi {
    /// The origins the app may reach.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub csp: Option<Csp>,
    /// The browser capabilities it asks for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permissions: Option<Permissions>,
    /// A dedicated sandbox origin, in a form each host defines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    /// Whether the app wants a visible border and background (absent: the host decides).
    #[serde(
        rename = "prefersBorder",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub prefers_border: Option<bool>,
    /// Members this version does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ResourceUi {
    /// The `_meta.ui` of a `_meta` object, if it is one of this shape.
    pub fn from_meta(meta: Option<&JsonObject>) -> Option<ResourceUi> {
        serde_json::from_value(meta?.get(META_KEY)?.clone()).ok()
    }
}

/// The settings a client declares with the extension
/// (`capabilities.extensions["io.modelcontextprotocol/ui"]`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ClientSettings {
    /// The UI media types the client renders; [`MIME_TYPE`] for MCP Apps.
    #[serde(rename = "mimeTypes", default, skip_serializing_if = "Option::is_none")]
    pub mime_types: Option<Vec<String>>,
    /// Members this version does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ClientSettings {
    /// The settings of a client that renders MCP Apps: `{"mimeTypes": [MIME_TYPE]}`.
    pub fn mcp_apps() -> Self {
        ClientSettings {
            mime_types: Some(vec![MIME_TYPE.to_owned()]),
            extra: JsonObject::new(),
        }
    }

    /// The settings declared in `capabilities`, if the extension is declared there with
    /// an object.
    pub fn of(capabilities: &crate::ClientCapabilities) -> Option<ClientSettings> {
        let value = capabilities.extensions.as_ref()?.get(EXTENSION_ID)?;
        serde_json::from_value(value.clone()).ok()
    }

    /// Whether these settings say the client renders MCP Apps: `mimeTypes` lists
    /// [`MIME_TYPE`] (the extension's one required setting).
    pub fn renders_apps(&self) -> bool {
        self.mime_types
            .iter()
            .flatten()
            .any(|m| is_app_mime_type(m))
    }

    /// The settings as the JSON object declared under the extension's identifier.
    pub fn to_object(&self) -> JsonObject {
        match serde_json::to_value(self) {
            Ok(Value::Object(object)) => object,
            _ => JsonObject::new(),
        }
    }
}
