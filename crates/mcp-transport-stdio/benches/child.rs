//! Round trips through the engine to a real child process (the engine-based echo server)
//! over stdio, with 1 and 16 requests in flight, against a floor: the same lines bounced
//! through `cat` with no engine on either side.
//!
//! Run with `cargo bench -p mcp-transport-stdio --bench child`.

use std::process::Stdio;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use mcp_jsonrpc::{NoHandler, RequestOptions};
use mcp_transport_stdio::{ServerCommand, client_config, connect};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

const ECHO: &str = env!("CARGO_BIN_EXE_mcp-stdio-echo");

#[allow(
    clippy::cast_precision_loss,
    reason = "iteration counts stay far below 2^52"
)]
fn child(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let params = serde_json::json!({"text": "0123456789abcdef"});
    let mut group = c.benchmark_group("child_round_trip");
    group.throughput(Throughput::Elements(1));

    group.bench_function("baseline_cat_ping_pong", |b| {
        b.iter_custom(|iters| {
            runtime.block_on(async {
                let mut cat = tokio::process::Command::new("cat")
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .kill_on_drop(true)
                    .spawn()
                    .unwrap();
                let mut stdin = cat.stdin.take().unwrap();
                let mut lines = BufReader::new(cat.stdout.take().unwrap()).lines();
                let line = br#"{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"0123456789abcdef"}}
"#;
                let started = Instant::now();
                for _ in 0..iters {
                    stdin.write_all(line).await.unwrap();
                    lines.next_line().await.unwrap().unwrap();
                }
                started.elapsed()
            })
        });
    });

    let (peer, server) = runtime.block_on(async {
        connect(&ServerCommand::new(ECHO), NoHandler, client_config()).unwrap()
    });
    for in_flight in [1usize, 16] {
        group.bench_function(format!("engine_in_flight_{in_flight}"), |b| {
            b.iter_custom(|iters| {
                runtime.block_on(async {
                    let per_task = iters.div_ceil(in_flight as u64);
                    let started = Instant::now();
                    let tasks: Vec<_> = (0..in_flight)
                        .map(|_| {
                            let peer = peer.clone();
                            let params = params.clone();
                            tokio::spawn(async move {
                                for _ in 0..per_task {
                                    peer.request("echo", Some(&params), RequestOptions::default())
                                        .await
                                        .unwrap();
                                }
                            })
                        })
                        .collect();
                    for task in tasks {
                        task.await.unwrap();
                    }
                    let done = per_task * in_flight as u64;
                    Duration::from_secs_f64(
                        started.elapsed().as_secs_f64() * iters as f64 / done as f64,
                    )
                })
            });
        });
    }
    group.finish();
    runtime.block_on(async { server.shutdown(Duration::from_secs(1)).await.unwrap() });
}

criterion_group!(benches, child);
criterion_main!(benches);
