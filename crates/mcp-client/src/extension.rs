//! Requests of methods that an extension defines, for extensions this crate does not
//! implement itself (<https://modelcontextprotocol.io/extensions/overview>): the client declares the extension
//! with [`ClientBuilder::extension`](crate::ClientBuilder::extension), calls its methods
//! with [`Client::extension_request`], and accepts the result types the extension defines,
//! and only those: an unknown `resultType`, or one of an extension the client did not
//! declare, stays [`Error::UnknownResultType`] (<https://modelcontextprotocol.io/specification/2026-07-28/basic>, Result
//! types). Tasks, Skills and MCP Apps are built on the same pieces.

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::{CallOptions, Client, Error};

/// The result of an extension's method: its `resultType` and the whole result object.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ExtensionResult {
    /// `complete`, or one of the result types the request accepted.
    pub result_type: String,
    /// The result as the server sent it (with `resultType` and `_meta`).
    pub value: Value,
}

impl Client {
    /// Sends `method`, a method of the extension `extension`, with `params` (this
    /// client's `_meta` is added as for every request), and returns its result.
    ///
    /// `result_types` are the `resultType` values the extension defines for this method
    /// besides `complete`; a result of any other type is [`Error::UnknownResultType`].
    ///
    /// ```no_run
    /// # async fn run(client: mcp_client::Client) -> Result<(), mcp_client::Error> {
    /// // The client was built with
    /// // `.extension("com.example/search", serde_json::Map::new())`.
    /// let mut params = serde_json::Map::new();
    /// params.insert("query".into(), "rust".into());
    /// let found = client
    ///     .extension_request("com.example/search", "search/query", params, &["partial"])
    ///     .await?;
    /// println!("{}: {}", found.result_type, found.value["hits"]);
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// [`Error::ExtensionNotDeclared`] when this client did not declare `extension` (the
    /// server may only use an extension both sides declared); otherwise the errors of any
    /// request, and [`Error::UnknownResultType`] for a result type not accepted here.
    pub async fn extension_request(
        &self,
        extension: &str,
        method: &str,
        params: Map<String, Value>,
        result_types: &[&str],
    ) -> Result<ExtensionResult, Error> {
        let declared = self
            .capabilities()
            .extensions
            .as_ref()
            .is_some_and(|extensions| extensions.contains_key(extension));
        if !declared {
            return Err(Error::ExtensionNotDeclared(extension.to_owned()));
        }
        let build = |meta| {
            let mut params = params.clone();
            params.insert(
                "_meta".to_owned(),
                serde_json::to_value(meta).unwrap_or_default(),
            );
            params
        };
        let raw: Box<RawValue> = self.send(method, build, &CallOptions::default()).await?;
        let value: Value = Client::decode(method, &raw)?;
        let result_type = match value.get("resultType") {
            // A result without `resultType` is complete (earlier revisions' shape).
            None => "complete".to_owned(),
            Some(Value::String(kind))
                if kind == "complete" || result_types.contains(&kind.as_str()) =>
            {
                kind.clone()
            }
            Some(other) => {
                return Err(Error::UnknownResultType(
                    other
                        .as_str()
                        .map_or_else(|| other.to_string(), str::to_owned),
                ));
            }
        };
        Ok(ExtensionResult { result_type, value })
    }
}
