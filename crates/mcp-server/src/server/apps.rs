//! The server side of the MCP Apps extension's registry rules (`crate::apps`): the
//! extension's declaration, and the build-time check that every link names a UI resource
//! the server has.

use mcp_jsonrpc::ErrorObject;
use serde_json::value::RawValue;

use super::Registry;
use crate::context::Context;
use crate::error::Error;
use crate::extension::Extension;
use crate::tool::BoxFuture;

/// The extension as `server/discover` declares it: no settings, no methods of its own
/// (the app talks to the host, and the host to the server with core methods).
pub(super) struct AppsExtension;

impl Extension for AppsExtension {
    fn id(&self) -> &str {
        mcp_types::apps::EXTENSION_ID
    }

    fn handle(
        &self,
        method: &str,
        _params: Box<RawValue>,
        _cx: Context,
    ) -> BoxFuture<Result<Box<RawValue>, ErrorObject>> {
        let error = ErrorObject::method_not_found(method);
        Box::pin(async move { Err(error) })
    }
}

/// Whether the registry holds a UI resource or a linked tool.
pub(super) fn in_use(registry: &Registry) -> bool {
    registry.resources.iter().any(|r| r.ui) || registry.tools.iter().any(|t| t.ui.is_some())
}

/// Refuses a tool link naming a `ui://` resource the registry does not have as a UI
/// resource (the extension's Resource Discovery: "Resource MUST exist on the server").
pub(super) fn check_links(registry: &Registry) -> Result<(), Error> {
    for tool in &registry.tools {
        let Some(uri) = tool.ui.as_deref().and_then(|ui| ui.resource_uri.as_deref()) else {
            continue;
        };
        let known = registry
            .resources
            .iter()
            .any(|r| r.ui && r.resource.uri == uri);
        if !known {
            return Err(Error::InvalidUiResource {
                uri: uri.to_owned(),
                reason: "a tool links to it, but no UI resource of the server has this URI",
            });
        }
    }
    Ok(())
}
