//! Method metadata, so that no upper crate spells a method string or pairs a request with
//! the wrong result type.

use serde::Serialize;
use serde::de::DeserializeOwned;

/// A request message type: its method name, its params type and the result it expects.
///
/// ```
/// use mcp_types::{ListToolsRequest, ListToolsResult, Request};
///
/// fn method_of<R: Request>() -> &'static str { R::METHOD }
/// assert_eq!(method_of::<ListToolsRequest>(), "tools/list");
/// let _: Option<<ListToolsRequest as Request>::Result> = None::<ListToolsResult>;
/// ```
pub trait Request: Serialize + DeserializeOwned {
    /// The JSON-RPC method name.
    const METHOD: &'static str;
    /// The type of `params`.
    type Params: Serialize + DeserializeOwned;
    /// The type of a successful response's `result`.
    type Result: Serialize + DeserializeOwned;
}

/// A notification message type: its method name and params type.
pub trait Notification: Serialize + DeserializeOwned {
    /// The JSON-RPC method name.
    const METHOD: &'static str;
    /// The type of `params`.
    type Params: Serialize + DeserializeOwned;
}
