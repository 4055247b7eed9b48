//! Resources: fixed URIs and RFC 6570 URI templates (<https://modelcontextprotocol.io/specification/2026-07-28/server/resources>).
//!
//! Templates support the level-1 form `{name}` (a value without `/`) and the reserved form
//! `{+name}` (any value, `/` included), which is what URI templates for resources use in
//! practice; other operators are refused at registration rather than matched wrongly.

use std::future::Future;
use std::sync::Arc;

use mcp_types::{EmbeddedResourceResource, OrderedMap, Resource, ResourceTemplate};

use crate::context::Context;
use crate::error::{Error, ToolError};
use crate::tool::BoxFuture;

type ReadFn = Arc<
    dyn Fn(
            String,
            OrderedMap<String>,
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

    text_setters!(resource {
        /// Sets the description.
        description,
        /// Sets the MIME type.
        mime_type,
        /// Sets the display title.
        title,
    });

    /// Sets `_meta` on the listing entry.
    #[must_use]
    pub fn meta(mut self, meta: mcp_types::JsonObject) -> Self {
        self.resource.meta = Some(meta);
        self
    }
}

impl ResourceTemplateDef {
    /// Resources matching `template` (such as `file:///logs/{date}`), read by `read`, which
    /// receives the URI and the values of the template's variables.
    pub fn new<F, Fut>(
        template: impl Into<String>,
        name: impl Into<String>,
        read: F,
    ) -> Result<Self, Error>
    where
        F: Fn(String, OrderedMap<String>, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<EmbeddedResourceResource>, ToolError>> + Send + 'static,
    {
        let template = template.into();
        let pattern = UriTemplate::parse(&template)?;
        Ok(ResourceTemplateDef {
            template: ResourceTemplate::new(name, template),
            pattern,
            read: Arc::new(move |uri, vars, cx| Box::pin(read(uri, vars, cx))),
        })
    }

    text_setters!(template {
        /// Sets the description.
        description,
        /// Sets the MIME type of the resources.
        mime_type,
    });
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    /// A variable; `reserved` (`{+name}`) values may contain `/`.
    Var {
        name: String,
        reserved: bool,
    },
}

/// A parsed URI template, for matching URIs against it.
#[derive(Debug, Clone)]
pub(crate) struct UriTemplate {
    parts: Vec<Part>,
}

impl UriTemplate {
    pub(crate) fn parse(template: &str) -> Result<Self, Error> {
        let invalid = |reason| Error::InvalidTemplate {
            template: template.to_owned(),
            reason,
        };
        let mut parts = Vec::new();
        let mut rest = template;
        while let Some(open) = rest.find('{') {
            if open > 0 {
                parts.push(Part::Literal(rest[..open].to_owned()));
            }
            let close = rest[open..]
                .find('}')
                .ok_or_else(|| invalid("unclosed `{`"))?
                + open;
            let expression = &rest[open + 1..close];
            let (reserved, name) = match expression.strip_prefix('+') {
                Some(name) => (true, name),
                None => (false, expression),
            };
            if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
                return Err(invalid(
                    "only `{name}` and `{+name}` expressions are supported",
                ));
            }
            if matches!(parts.last(), Some(Part::Var { .. })) {
                return Err(invalid("two variables must be separated by literal text"));
            }
            parts.push(Part::Var {
                name: name.to_owned(),
                reserved,
            });
            rest = &rest[close + 1..];
        }
        if rest.contains('}') {
            return Err(invalid("unopened `}`"));
        }
        if !rest.is_empty() {
            parts.push(Part::Literal(rest.to_owned()));
        }
        Ok(UriTemplate { parts })
    }

    /// The variables' values if `uri` matches.
    pub(crate) fn matches(&self, uri: &str) -> Option<OrderedMap<String>> {
        let mut vars = OrderedMap::new();
        let mut rest = uri;
        for (i, part) in self.parts.iter().enumerate() {
            match part {
                Part::Literal(literal) => rest = rest.strip_prefix(literal.as_str())?,
                Part::Var { name, reserved } => {
                    // The value runs to the next literal (its first occurrence, or the
                    // end of the URI when that literal closes the template) or the end.
                    let end = match self.parts.get(i + 1) {
                        Some(Part::Literal(next)) if i + 2 == self.parts.len() => {
                            rest.strip_suffix(next.as_str())?.len()
                        }
                        Some(Part::Literal(next)) => rest.find(next.as_str())?,
                        _ => rest.len(),
                    };
                    let value = &rest[..end];
                    if value.is_empty()
                        || (!reserved && value.contains('/'))
                        || has_dot_segment(value)
                    {
                        return None;
                    }
                    // A variable named twice stands for one value (RFC 6570 expands it
                    // the same way each time).
                    if vars.get(name).is_some_and(|seen| seen != value) {
                        return None;
                    }
                    vars.insert(name.clone(), value.to_owned());
                    rest = &rest[end..];
                }
            }
        }
        rest.is_empty().then_some(vars)
    }
}

/// Whether a variable's value holds a `.` or `..` path segment, plain or
/// percent-encoded (`%2e`, with `%2f`, `%5c` and `\\` as separators too). Such a value would let a URI such as
/// `file:///srv/docs/../../etc/passwd` match `file:///srv/{+path}` and hand the handler a
/// path outside the template's own prefix (RFC 3986 §5.2.4 removes dot segments, so the
/// URI does not name a resource under the template), so it matches no template.
fn has_dot_segment(value: &str) -> bool {
    let lowered = value
        .to_ascii_lowercase()
        .replace("%2f", "/")
        .replace("%5c", "/");
    lowered.split(['/', '\\']).any(|segment| {
        let mut rest = segment;
        let mut dots = 0;
        while !rest.is_empty() {
            if let Some(after) = rest.strip_prefix('.') {
                rest = after;
            } else if let Some(after) = rest.strip_prefix("%2e") {
                rest = after;
            } else {
                return false;
            }
            dots += 1;
        }
        (1..=2).contains(&dots)
    })
}

#[cfg(test)]
mod tests {
    use super::{UriTemplate, has_dot_segment};

    #[test]
    fn dot_segments_match_no_template() {
        for dotted in [
            ".",
            "..",
            "a/../b",
            "a/./b",
            "%2e%2E",
            ".%2e/x",
            "a\\..\\b",
            "../",
            "..%2Fetc",
            "x%5c..%5cy",
        ] {
            assert!(has_dot_segment(dotted), "{dotted}");
        }
        for plain in [
            "a..b",
            "...",
            "a.b/c",
            "%2e%2e%2e",
            "x%2ey",
            ".hidden",
            "a/b",
        ] {
            assert!(!has_dot_segment(plain), "{plain}");
        }
        let t = UriTemplate::parse("file:///srv/{+path}").unwrap();
        assert!(t.matches("file:///srv/docs/a.txt").is_some());
        assert!(t.matches("file:///srv/docs/../../etc/passwd").is_none());
        let simple = UriTemplate::parse("test://item/{id}").unwrap();
        assert!(simple.matches("test://item/..").is_none());
        assert!(simple.matches("test://item/a..b").is_some());
    }

    #[test]
    fn templates_match_what_they_describe() {
        let t = UriTemplate::parse("test://template/{id}/data").unwrap();
        let vars = t.matches("test://template/42/data").unwrap();
        assert_eq!(vars.get("id").map(String::as_str), Some("42"));
        for miss in [
            "test://template//data",
            "test://template/4/2/data",
            "test://template/42/datum",
            "x",
        ] {
            assert!(t.matches(miss).is_none(), "{miss}");
        }
        // The closing literal is anchored at the end; a repeated variable is one value.
        let suffix = UriTemplate::parse("file:///{name}.txt").unwrap();
        assert_eq!(
            suffix
                .matches("file:///a.txt.txt")
                .unwrap()
                .get("name")
                .map(String::as_str),
            Some("a.txt")
        );
        let twice = UriTemplate::parse("x://{a}-{a}").unwrap();
        assert!(twice.matches("x://1-1").is_some());
        assert!(twice.matches("x://1-2").is_none());
        let reserved = UriTemplate::parse("file:///{+path}").unwrap();
        assert_eq!(
            reserved
                .matches("file:///a/b.txt")
                .unwrap()
                .get("path")
                .map(String::as_str),
            Some("a/b.txt")
        );
        for bad in ["{", "a}", "{}", "{a b}", "{?q}", "{a}{b}"] {
            assert!(UriTemplate::parse(bad).is_err(), "{bad}");
        }
    }
}
