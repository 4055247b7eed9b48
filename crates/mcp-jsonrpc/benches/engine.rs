//! Engine benchmarks: codec throughput, and round trips through two peers over the
//! in-memory duplex with 1 and 16 requests in flight.
//!
//! Run with `cargo bench -p mcp-jsonrpc --bench engine`. The figures in the crate README
//! come from this file.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use mcp_jsonrpc::{
    DecodeOptions, ErrorObject, Handler, NoHandler, Peer, PeerConfig, Request, RequestContext,
    RequestOptions, decode, encode_request, encode_result, memory,
};
use mcp_types::RequestId;
use serde_json::value::RawValue;

/// A `tools/call` of the echo tool with a 16-byte argument, as a client sends it.
const CALL: &str = r#"{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"echo","arguments":{"text":"0123456789abcdef"}}}"#;

fn codec(c: &mut Criterion) {
    let mut group = c.benchmark_group("codec");
    group.throughput(Throughput::Bytes(CALL.len() as u64));
    // The baseline: parsing the same bytes into a `serde_json::Value`, which any engine must
    // at least match.
    group.bench_function("baseline_parse_value", |b| {
        b.iter(|| serde_json::from_slice::<serde_json::Value>(black_box(CALL.as_bytes())).unwrap());
    });
    group.bench_function("decode_request", |b| {
        b.iter(|| decode(black_box(CALL.as_bytes()), DecodeOptions::default()).unwrap());
    });
    let params: serde_json::Value =
        serde_json::from_str::<serde_json::Value>(CALL).unwrap()["params"].clone();
    group.bench_function("encode_request", |b| {
        b.iter(|| {
            encode_request(
                &RequestId::Integer(17),
                "tools/call",
                Some(black_box(&params)),
            )
            .unwrap()
        });
    });
    let result = serde_json::value::to_raw_value(&serde_json::json!({
        "resultType": "complete", "content": [{"type": "text", "text": "0123456789abcdef"}]
    }))
    .unwrap();
    group.bench_function("encode_result", |b| {
        b.iter(|| encode_result(&RequestId::Integer(17), black_box(&*result)).unwrap());
    });
    group.finish();
}

struct Echo;

impl Handler for Echo {
    async fn request(
        &self,
        request: Request,
        _cx: RequestContext,
    ) -> Result<Box<RawValue>, ErrorObject> {
        request
            .params
            .ok_or_else(|| ErrorObject::invalid_params("missing params"))?
            .into_raw_value()
            .map_err(|e| e.to_error_object())
    }
}

#[allow(
    clippy::cast_precision_loss,
    reason = "iteration counts stay far below 2^52"
)]
fn round_trips(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (client, _client_conn, _server_conn) = runtime.block_on(async {
        let ((a_read, a_write), (b_read, b_write)) = memory::pair(256);
        let (client, client_conn) =
            Peer::connect(a_read, a_write, NoHandler, PeerConfig::default());
        let (_server, server_conn) = Peer::connect(b_read, b_write, Echo, PeerConfig::default());
        (client, client_conn, server_conn)
    });
    let params: serde_json::Value =
        serde_json::from_str::<serde_json::Value>(CALL).unwrap()["params"].clone();

    let mut group = c.benchmark_group("memory_round_trip");
    // The floor: the same frames bounced between two tasks over the same channels, with no
    // parsing, ids or dispatch.
    group.bench_function("baseline_channel_ping_pong", |b| {
        b.iter_custom(|iters| {
            runtime.block_on(async {
                let (to_server, mut server_rx) = tokio::sync::mpsc::channel::<bytes::Bytes>(256);
                let (to_client, mut client_rx) = tokio::sync::mpsc::channel::<bytes::Bytes>(256);
                let server = tokio::spawn(async move {
                    while let Some(frame) = server_rx.recv().await {
                        if to_client.send(frame).await.is_err() {
                            break;
                        }
                    }
                });
                let frame = bytes::Bytes::from_static(CALL.as_bytes());
                let started = Instant::now();
                for _ in 0..iters {
                    to_server.send(frame.clone()).await.unwrap();
                    client_rx.recv().await.unwrap();
                }
                let elapsed = started.elapsed();
                drop(to_server);
                server.await.unwrap();
                elapsed
            })
        });
    });
    for in_flight in [1usize, 16] {
        group.throughput(Throughput::Elements(1));
        group.bench_function(format!("in_flight_{in_flight}"), |b| {
            b.iter_custom(|iters| {
                runtime.block_on(async {
                    let started = Instant::now();
                    let per_task = iters.div_ceil(in_flight as u64);
                    let mut tasks = Vec::with_capacity(in_flight);
                    for _ in 0..in_flight {
                        let client = client.clone();
                        let params = params.clone();
                        tasks.push(tokio::spawn(async move {
                            for _ in 0..per_task {
                                client
                                    .request("tools/call", Some(&params), RequestOptions::default())
                                    .await
                                    .unwrap();
                            }
                        }));
                    }
                    for task in tasks {
                        task.await.unwrap();
                    }
                    let elapsed = started.elapsed();
                    // Report time per request, whatever the rounding of iters across tasks.
                    let done = per_task * in_flight as u64;
                    Duration::from_secs_f64(elapsed.as_secs_f64() * iters as f64 / done as f64)
                })
            });
        });
    }
    group.finish();
}

criterion_group!(benches, codec, round_trips);
criterion_main!(benches);
