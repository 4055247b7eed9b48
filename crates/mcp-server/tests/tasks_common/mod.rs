//! What the Tasks extension tests share: requests in, JSON out, straight through
//! `Server::handle`, with a chosen `Authorization` header (the default task owner).

#![allow(dead_code, unreachable_pub)]

use std::sync::Arc;

use mcp_jsonrpc::{
    CancellationToken, ErrorObject, NotificationSink, Request, RequestContext, TransportInfo,
};
use mcp_server::Server;
use mcp_types::RequestId;
use serde_json::{Value, json};

/// Who sends a request: its `Authorization` header, and whether it declares the extension.
#[derive(Clone, Copy)]
pub struct Caller {
    pub credential: Option<&'static str>,
    pub declares: bool,
    /// The principal an authenticating transport established, if any.
    pub principal: Option<&'static str>,
}

/// A principal as an authenticator would establish it.
#[derive(Debug)]
pub struct Who(pub &'static str);

impl mcp_jsonrpc::Principal for Who {
    fn id(&self) -> &str {
        self.0
    }
}

pub const ALICE: Caller = Caller {
    credential: Some("Bearer alice"),
    declares: true,
    principal: None,
};
pub const BOB: Caller = Caller {
    credential: Some("Bearer bob"),
    declares: true,
    principal: None,
};
pub const PLAIN: Caller = Caller {
    credential: Some("Bearer alice"),
    declares: false,
    principal: None,
};

pub fn meta(caller: Caller) -> Value {
    let extensions = if caller.declares {
        json!({"io.modelcontextprotocol/tasks": {}})
    } else {
        json!({})
    };
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "extensions": extensions}
    })
}

/// Calls the tool `name` (no arguments) as `caller`; the call must succeed: its result.
pub async fn call_tool(server: &Server, caller: Caller, name: &str) -> Value {
    let params = json!({"name": name, "arguments": {}});
    call(server, caller, "tools/call", params).await.unwrap()
}

/// Calls the tool `name` (no arguments) as `caller`; the call must fail: its error.
pub async fn call_tool_err(server: &Server, caller: Caller, name: &str) -> ErrorObject {
    let params = json!({"name": name, "arguments": {}});
    call(server, caller, "tools/call", params)
        .await
        .unwrap_err()
}

/// Answers the input requests of task `id` with `responses` as `caller`; the update must
/// be accepted.
pub async fn update(server: &Server, caller: Caller, id: &str, responses: Value) -> Value {
    let params = json!({"taskId": id, "inputResponses": responses});
    call(server, caller, "tasks/update", params).await.unwrap()
}

/// Sends `method` with `params` (to which `_meta` is added) as `caller`.
pub async fn call(
    server: &Server,
    caller: Caller,
    method: &str,
    params: Value,
) -> Result<Value, ErrorObject> {
    let mut params = params;
    params["_meta"] = meta(caller);
    let raw = serde_json::value::to_raw_value(&params).unwrap();
    let (tx, _rx) = tokio::sync::mpsc::channel(16);
    let mut rpc = RequestContext::new(
        RequestId::Integer(1),
        CancellationToken::new(),
        NotificationSink::channel(tx),
    );
    if let Some(principal) = caller.principal {
        // An authenticating transport keeps the credential to itself.
        let info = TransportInfo::with_headers(Vec::new()).with_principal(Arc::new(Who(principal)));
        rpc = rpc.with_transport_info(Arc::new(info));
    } else if let Some(credential) = caller.credential {
        let headers = vec![("authorization".to_owned(), credential.to_owned())];
        rpc = rpc.with_transport_info(Arc::new(TransportInfo::with_headers(headers)));
    }
    let result = server
        .handle(Request::new(RequestId::Integer(1), method, Some(raw)), rpc)
        .await?;
    Ok(serde_json::from_str(result.get()).unwrap())
}

pub async fn get(server: &Server, caller: Caller, id: &str) -> Result<Value, ErrorObject> {
    call(server, caller, "tasks/get", json!({"taskId": id})).await
}

/// Polls `tasks/get` until the task leaves `working` (the runs are on the same runtime, so
/// yielding lets them progress).
pub async fn settled(server: &Server, caller: Caller, id: &str) -> Value {
    for _ in 0..10_000 {
        let task = get(server, caller, id).await.unwrap();
        if task["status"] != "working" {
            return task;
        }
        tokio::task::yield_now().await;
    }
    panic!("task {id} stayed working");
}

pub fn accept(content: Value) -> Value {
    let mut answer = json!({"action": "accept"});
    answer["content"] = content;
    answer
}
