//! Entry points for the fuzz targets of `fuzz/` (feature `fuzzing`). Not part of the API:
//! hidden from the docs, exempt from semver, and only what a target needs to reach
//! parsers that are private to this crate.

use std::time::Duration;

use serde_json::Value;

use crate::state::{Binding, StateKeys};
use crate::{TemplateValue, UriTemplate};

/// Parses `template` as a resource URI template and matches `uri` against it: `None`
/// when the template is refused or the URI does not match, else the variables in order.
#[must_use]
pub fn match_uri_template(template: &str, uri: &str) -> Option<Vec<(String, TemplateValue)>> {
    let parsed = UriTemplate::parse_matchable(template).ok()?;
    parsed.matches(uri).map(|vars| {
        vars.iter()
            .map(|(name, value)| (name.to_owned(), value.clone()))
            .collect()
    })
}

/// Expands `template` with `values`: `None` when it is not a template or the values
/// do not fit it (a prefix modifier on a list or a map).
#[must_use]
pub fn expand_uri_template(template: &str, values: &[(String, TemplateValue)]) -> Option<String> {
    let parsed = UriTemplate::parse(template).ok()?;
    let mut map = mcp_types::OrderedMap::new();
    for (name, value) in values {
        map.insert(name.clone(), value.clone());
    }
    parsed.expand(&map).ok()
}

/// A `requestState` sealer under a fixed key, bound to one request shape.
#[derive(Debug)]
pub struct Sealer {
    keys: StateKeys,
}

/// What a sealed state is bound to, owned.
#[derive(Debug, Clone)]
pub struct Bound {
    /// The request's method.
    pub method: String,
    /// The tool, prompt or resource name.
    pub name: String,
    /// The request's arguments.
    pub arguments: Option<Value>,
    /// The principal's id.
    pub principal: Option<String>,
}

impl Bound {
    fn binding(&self) -> Binding<'_> {
        Binding {
            method: &self.method,
            name: &self.name,
            arguments: self.arguments.as_ref(),
            principal: self.principal.as_deref(),
        }
    }
}

impl Sealer {
    /// A sealer under `key`.
    #[must_use]
    pub fn new(key: [u8; 32]) -> Self {
        Sealer {
            keys: StateKeys::new(key),
        }
    }

    /// Seals `app` for `bound`, valid for an hour.
    ///
    /// # Panics
    /// When the OS's random source gives no nonce (which a fuzz run cannot go on without).
    #[must_use]
    pub fn seal(&self, bound: &Bound, app: &Value) -> String {
        self.keys
            .seal(&bound.binding(), app, Duration::from_hours(1))
            .expect("a nonce from the OS's random source")
    }

    /// Opens `sealed` for `bound`: the handler state, or why it was refused.
    ///
    /// # Errors
    /// The refusal's message, as the server would send it with -32602.
    pub fn open(&self, bound: &Bound, sealed: &str) -> Result<Value, &'static str> {
        self.keys
            .open(&bound.binding(), sealed)
            .map_err(crate::state::StateError::message)
    }
}
