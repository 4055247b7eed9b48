//! The client over a caller-supplied transport (`ClientBuilder::connect_custom`): requests
//! arrive built (with `_meta`), results and the MRTR loop work as over any transport, a
//! subscription is carried by the transport's `listen`, and `InputHandlers` answers with
//! the registered handlers.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_client::{BoxFuture, Client, CustomTransport, Error, EventSink, ListenEvent};
use mcp_jsonrpc::RequestOptions;
use mcp_types::{ElicitResult, ElicitResultAction, InputRequest, InputResponse, JsonObject};
use serde_json::value::RawValue;
use serde_json::{Value, json};

/// Answers from a script and records what it was sent.
#[derive(Default)]
struct Scripted {
    sent: Mutex<Vec<(String, Value)>>,
    shut: Mutex<bool>,
}

impl CustomTransport for Scripted {
    fn request(
        &self,
        method: &str,
        params: Value,
        _options: RequestOptions,
    ) -> BoxFuture<Result<Box<RawValue>, Error>> {
        self.sent
            .lock()
            .unwrap()
            .push((method.to_owned(), params.clone()));
        let result = match method {
            "tools/call" if params.get("inputResponses").is_none() => json!({
                "resultType": "input_required",
                "inputRequests": {"q": {"method": "elicitation/create", "params": {
                    "message": "Name?", "requestedSchema": {"type": "object", "properties": {}}}}},
                "requestState": "opaque"
            }),
            "tools/call" => json!({"content": [{"type": "text", "text": "done"}]}),
            _ => json!({"tools": []}),
        };
        Box::pin(async move { Ok(serde_json::value::to_raw_value(&result).unwrap()) })
    }

    fn listen(&self, params: Value, events: EventSink) -> BoxFuture<()> {
        Box::pin(async move {
            let filter = serde_json::from_value(params["notifications"].clone()).unwrap();
            events.send(ListenEvent::Acknowledged(filter));
            events.send(ListenEvent::ToolsListChanged);
            events.closed().await;
        })
    }

    fn shutdown(&self, _grace: Duration) -> BoxFuture<()> {
        *self.shut.lock().unwrap() = true;
        Box::pin(async {})
    }
}

#[tokio::test]
async fn a_custom_transport_carries_requests_subscriptions_and_shutdown() {
    let builder = Client::builder("custom", "1.0")
        .on_elicit(|_| async { Ok(ElicitResult::new(ElicitResultAction::Decline)) });
    let handlers = builder.input_handlers();
    assert!(handlers.capabilities().elicitation.is_some());
    assert_eq!(handlers.info().name, "custom");
    let request: InputRequest = serde_json::from_value(json!({"method": "elicitation/create",
        "params": {"message": "m", "requestedSchema": {"type": "object", "properties": {}}}}))
    .unwrap();
    assert!(matches!(
        handlers.answer(request).await,
        Ok(InputResponse::Elicit(_))
    ));

    let transport = Arc::new(Scripted::default());
    let client = builder.connect_custom(transport.clone());
    client.list_tools_all().await.unwrap();
    let result = client.call_tool("t", JsonObject::new()).await.unwrap();
    assert_eq!(
        serde_json::to_value(&result).unwrap()["content"][0]["text"],
        "done"
    );
    let sent = transport.sent.lock().unwrap().clone();
    assert_eq!(sent.len(), 3);
    assert_eq!(
        sent[0].1["_meta"]["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    // The retry carries the answer and the state, as over any transport.
    assert_eq!(sent[2].1["requestState"], "opaque");
    assert_eq!(sent[2].1["inputResponses"]["q"]["action"], "decline");

    let mut filter = mcp_types::SubscriptionFilter::default();
    filter.tools_list_changed = Some(true);
    let mut subscription = client.listen(filter.clone()).await.unwrap();
    assert_eq!(
        subscription.next().await,
        Some(ListenEvent::Acknowledged(filter))
    );
    assert_eq!(
        subscription.next().await,
        Some(ListenEvent::ToolsListChanged)
    );
    drop(subscription);

    client.shutdown(Duration::from_secs(1)).await;
    assert!(*transport.shut.lock().unwrap());
}
