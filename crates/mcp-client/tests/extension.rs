//! A user-defined extension end to end: a server extension (`mcp_server::Extension`)
//! with a method of its own and a result type of its own, called with
//! `Client::extension_request` by a client that declared it.

use mcp_client::{Client, ClientBuilder, Error};
use mcp_jsonrpc::ErrorObject;
use mcp_server::{Context, Extension, Server};
use mcp_test_support::client::connect_in_memory;
use mcp_types::JsonObject;
use serde_json::value::RawValue;
use serde_json::{Value, json};

const ID: &str = "com.example/search";

/// `search/query`: `partial` with the first hit while `more` is asked for, else
/// `complete`; `search/odd` answers a result type the extension never defined.
struct Search;

impl Extension for Search {
    fn id(&self) -> &str {
        ID
    }

    fn methods(&self) -> &[&'static str] {
        &["search/query", "search/odd"]
    }

    fn handle(
        &self,
        method: &str,
        params: Box<RawValue>,
        _cx: Context,
    ) -> std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<Box<RawValue>, ErrorObject>> + Send>,
    > {
        let method = method.to_owned();
        Box::pin(async move {
            let params: Value = serde_json::from_str(params.get())
                .map_err(|e| ErrorObject::invalid_params(e.to_string()))?;
            let query = params["query"].as_str().unwrap_or_default().to_owned();
            let result = match method.as_str() {
                "search/odd" => json!({"resultType": "sideways"}),
                _ if params["more"] == true => {
                    json!({"resultType": "partial", "hits": [format!("{query}-1")]})
                }
                _ => {
                    json!({"resultType": "complete", "hits": [format!("{query}-1"), format!("{query}-2")]})
                }
            };
            Ok(serde_json::value::to_raw_value(&result).expect("JSON"))
        })
    }
}

fn connect(builder: ClientBuilder) -> (Client, mcp_jsonrpc::Connection, mcp_jsonrpc::Connection) {
    let server = Server::builder("ext", "1")
        .extension(Search)
        .build()
        .unwrap();
    connect_in_memory(server, builder, 16)
}

fn params(query: &str, more: bool) -> JsonObject {
    let mut params = JsonObject::new();
    params.insert("query".into(), query.into());
    params.insert("more".into(), more.into());
    params
}

#[tokio::test]
async fn a_declared_extension_is_called_with_its_own_result_types() {
    let (client, _c, _s) = connect(Client::builder("c", "1").extension(ID, JsonObject::new()));
    let done = client
        .extension_request(ID, "search/query", params("rust", false), &["partial"])
        .await
        .unwrap();
    assert_eq!(done.result_type, "complete");
    assert_eq!(done.value["hits"], json!(["rust-1", "rust-2"]));
    let partial = client
        .extension_request(ID, "search/query", params("mcp", true), &["partial"])
        .await
        .unwrap();
    assert_eq!(partial.result_type, "partial");
    assert_eq!(partial.value["hits"], json!(["mcp-1"]));
    // A result type the caller did not accept is an error, even from a declared extension.
    let refused = client
        .extension_request(ID, "search/query", params("mcp", true), &[])
        .await
        .unwrap_err();
    assert!(
        matches!(&refused, Error::UnknownResultType(t) if t == "partial"),
        "{refused}"
    );
    let odd = client
        .extension_request(ID, "search/odd", JsonObject::new(), &["partial"])
        .await
        .unwrap_err();
    assert!(
        matches!(&odd, Error::UnknownResultType(t) if t == "sideways"),
        "{odd}"
    );
}

#[tokio::test]
async fn an_undeclared_extension_is_never_called() {
    let (client, _c, _s) = connect(Client::builder("c", "1"));
    let err = client
        .extension_request(ID, "search/query", params("rust", false), &["partial"])
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::ExtensionNotDeclared(id) if id == ID),
        "{err}"
    );
}
