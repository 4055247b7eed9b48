//! Resources: fixed URIs and RFC 6570 URI templates (<https://modelcontextprotocol.io/specification/2026-07-28/server/resources>).
//!
//! Templates are parsed, expanded and matched by [`UriTemplate`], which says which forms
//! match a URI and which it refuses at registration as ambiguous.

use std::future::Future;
use std::sync::Arc;

use mcp_types::{EmbeddedResourceResource, OrderedMap, Resource, ResourceTemplate};

use crate::context::Context;
use crate::error::{Error, ToolError};
use crate::tool::BoxFuture;
use crate::uri_template::{TemplateValue, UriTemplate};

type ReadFn = Arc<
    dyn Fn(
            String,
            OrderedMap<TemplateValue>,
            Context,
        ) -> BoxFuture<Result<Vec<EmbeddedResourceResource>, ToolError>>
        + Send
        + Sync,
>;

/// A resource at a fixed URI.
#[derive(Clone)]
pub struct ResourceDef {
    pub(crate) resource: Resource,
    pub(crate) read: ReadFn,
    /// An MCP App's UI resource: listed only to clients that render apps.
    pub(crate) ui: bool,
}

/// A family of resources named by a URI template.
#[derive(Clone)]
pub struct ResourceTemplateDef {
    pub(crate) template: ResourceTemplate,
    pub(crate) pattern: UriTemplate,
    pub(crate) read: ReadFn,
}

mcp_types::debug_fields!(ResourceDef { resource });

mcp_types::debug_fields!(ResourceTemplateDef { template });

impl ResourceDef {
    /// A resource at `uri`, read by `read`.
    ///
    /// ```
    /// use mcp_server::ResourceDef;
    /// use mcp_types::{EmbeddedResourceResource, TextResourceContents};
    ///
    /// let readme = ResourceDef::new("file:///README.md", "readme", |uri, _cx| async move {
    ///     Ok(vec![EmbeddedResourceResource::TextResourceContents(TextResourceContents::new("# Hello", uri))])
    /// })
    /// .mime_type("text/markdown");
    /// ```
    pub fn new<F, Fut>(uri: impl Into<String>, name: impl Into<String>, read: F) -> Self
    where
        F: Fn(String, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<EmbeddedResourceResource>, ToolError>> + Send + 'static,
    {
        ResourceDef {
            resource: Resource::new(name, uri),
            read: Arc::new(move |uri, _vars, cx| Box::pin(read(uri, cx))),
            ui: false,
        }
    }

    /// A resource served exactly as `resource` describes it (URI, name, title,
    /// description, MIME type, size, annotations, icons, `_meta`), read by `read`: for a
    /// proxy or gateway that republishes another server's resources.
    pub fn from_resource<F, Fut>(resource: Resource, read: F) -> Self
    where
        F: Fn(String, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<EmbeddedResourceResource>, ToolError>> + Send + 'static,
    {
        ResourceDef {
            resource,
            read: Arc::new(move |uri, _vars, cx| Box::pin(read(uri, cx))),
            ui: false,
        }
    }

    text_setters!(resource {
        /// Sets the description.
        description,
        /// Sets the MIME type.
        mime_type,
        /// Sets the display title.
        title,
    });

    icons_setter!(resource);

    /// Sets `_meta` on the listing entry.
    #[must_use]
    pub fn meta(mut self, meta: mcp_types::JsonObject) -> Self {
        self.resource.meta = Some(meta);
        self
    }
}

impl ResourceTemplateDef {
    /// Resources matching `template` (such as `file:///logs/{date}`), read by `read`, which
    /// receives the URI and the values of the template's variables, percent-decoded, each
    /// as a string: a list or a map (from `{x*}`, `{?x*}` and the like) comes joined with
    /// `,` ([`TemplateValue::to_joined`]); [`with_values`](Self::with_values) gives them
    /// as they are.
    ///
    /// # Errors
    /// [`Error::InvalidTemplate`] when `template` is not an RFC 6570 template or is one
    /// whose match would be ambiguous (see [`UriTemplate`]).
    pub fn new<F, Fut>(
        template: impl Into<String>,
        name: impl Into<String>,
        read: F,
    ) -> Result<Self, Error>
    where
        F: Fn(String, OrderedMap<String>, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<EmbeddedResourceResource>, ToolError>> + Send + 'static,
    {
        Self::with_values(template, name, move |uri, values, cx| {
            let mut joined = OrderedMap::new();
            for (name, value) in values.iter() {
                joined.insert(name, value.to_joined());
            }
            read(uri, joined, cx)
        })
    }

    /// Like [`new`](Self::new), but `read` receives each variable's value as matched: a
    /// string, a list or a map.
    ///
    /// ```
    /// use mcp_server::{ResourceTemplateDef, TemplateValue};
    /// use mcp_types::{EmbeddedResourceResource, TextResourceContents};
    ///
    /// let search = ResourceTemplateDef::with_values("search://docs{?q,tag*}", "search", |uri, values, _cx| async move {
    ///     let tags = match values.get("tag") {
    ///         Some(TemplateValue::List(tags)) => tags.join(" "),
    ///         _ => String::new(),
    ///     };
    ///     Ok(vec![EmbeddedResourceResource::TextResourceContents(TextResourceContents::new(tags, uri))])
    /// })
    /// .unwrap();
    /// assert_eq!(search.uri_template().as_str(), "search://docs{?q,tag*}");
    /// ```
    ///
    /// # Errors
    /// As [`new`](Self::new).
    pub fn with_values<F, Fut>(
        template: impl Into<String>,
        name: impl Into<String>,
        read: F,
    ) -> Result<Self, Error>
    where
        F: Fn(String, OrderedMap<TemplateValue>, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<EmbeddedResourceResource>, ToolError>> + Send + 'static,
    {
        let template = template.into();
        let pattern = UriTemplate::parse_matchable(&template)?;
        Ok(ResourceTemplateDef {
            template: ResourceTemplate::new(name, template),
            pattern,
            read: Arc::new(move |uri, vars, cx| Box::pin(read(uri, vars, cx))),
        })
    }

    /// A template served exactly as `template` describes it, read by `read` with the URI
    /// asked for: for a proxy or gateway that republishes another server's templates.
    ///
    /// # Errors
    /// As [`new`](Self::new).
    pub fn from_template<F, Fut>(template: ResourceTemplate, read: F) -> Result<Self, Error>
    where
        F: Fn(String, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<EmbeddedResourceResource>, ToolError>> + Send + 'static,
    {
        let pattern = UriTemplate::parse_matchable(&template.uri_template)?;
        Ok(ResourceTemplateDef {
            template,
            pattern,
            read: Arc::new(move |uri, _vars, cx| Box::pin(read(uri, cx))),
        })
    }

    /// The parsed template.
    #[must_use]
    pub fn uri_template(&self) -> &UriTemplate {
        &self.pattern
    }

    /// The URI of the resource that `values` name (see [`UriTemplate::expand`]).
    ///
    /// # Errors
    /// [`Error::TemplateExpansion`] when a prefix modifier meets a list or a map.
    pub fn expand(&self, values: &OrderedMap<TemplateValue>) -> Result<String, Error> {
        self.pattern.expand(values)
    }

    text_setters!(template {
        /// Sets the description.
        description,
        /// Sets the MIME type of the resources.
        mime_type,
    });

    icons_setter!(template);
}
