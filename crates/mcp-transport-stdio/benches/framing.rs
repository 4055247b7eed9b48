//! Throughput of the stdio line framing over in-memory streams: decoding with
//! `LineReader` and encoding with `LineWriter`, in bytes per second.
//!
//! Run with `cargo bench -p mcp-transport-stdio --bench framing`.

use std::hint::black_box;
use std::io::Cursor;

use bytes::Bytes;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use mcp_jsonrpc::{FrameReader, FrameWriter};
use mcp_transport_stdio::{LineReader, LineWriter};
use tokio::runtime::Runtime;

/// The workloads: a name, a number of lines and each line's length with its newline.
const CASES: [(&str, usize, usize); 2] = [
    ("10000 lines of 100 B", 10_000, 100),
    ("64 lines of 64 KiB", 64, 64 * 1024),
];

/// Builds `lines` JSON-RPC notifications of exactly `len` bytes each, newline included.
fn input(lines: usize, len: usize) -> Bytes {
    const HEAD: &[u8] =
        b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"data\":\"";
    const TAIL: &[u8] = b"\"}}\n";
    let pad = len - HEAD.len() - TAIL.len();
    let mut data = Vec::with_capacity(lines * len);
    for _ in 0..lines {
        data.extend_from_slice(HEAD);
        data.extend(std::iter::repeat_n(b'x', pad));
        data.extend_from_slice(TAIL);
    }
    Bytes::from(data)
}

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a current-thread runtime builds")
}

fn throughput(data: &Bytes) -> Throughput {
    Throughput::Bytes(u64::try_from(data.len()).expect("the input fits in u64"))
}

fn read(c: &mut Criterion) {
    let runtime = runtime();
    let mut group = c.benchmark_group("LineReader");
    for (name, lines, len) in CASES {
        let data = input(lines, len);
        group.throughput(throughput(&data));
        group.bench_function(name, |b| {
            b.iter(|| {
                runtime.block_on(async {
                    let mut reader = LineReader::new(Cursor::new(data.clone()));
                    let mut frames = 0;
                    while let Some(frame) = reader.read_frame().await {
                        black_box(frame.expect("the input is well formed"));
                        frames += 1;
                    }
                    assert_eq!(frames, lines);
                });
            });
        });
    }
    group.finish();
}

fn write(c: &mut Criterion) {
    let runtime = runtime();
    let mut group = c.benchmark_group("LineWriter");
    for (name, lines, len) in CASES {
        let data = input(lines, len);
        // The frames are the lines without their newlines, sliced out without copying.
        let frames: Vec<Bytes> = (0..lines)
            .map(|i| data.slice(i * len..(i + 1) * len - 1))
            .collect();
        group.throughput(throughput(&data));
        group.bench_function(name, |b| {
            b.iter(|| {
                runtime.block_on(async {
                    let mut writer = LineWriter::new(tokio::io::sink());
                    for frame in &frames {
                        writer
                            .write_frame(frame.clone())
                            .await
                            .expect("the sink accepts everything");
                    }
                    writer.close().await.expect("the sink closes");
                });
            });
        });
    }
    group.finish();
}

criterion_group!(benches, read, write);
criterion_main!(benches);
