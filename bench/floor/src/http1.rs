//! The HTTP/1.1 accept loop of the benchmark's Rust servers: `floor`'s, and
//! `rmcp-server`'s, which includes this file, so that both are served alike (a task per
//! connection, `TCP_NODELAY` on, hyper's HTTP/1.1).

/// Listens on `addr`, prints `http://ADDR/mcp` (the bound address) on the first line of
/// stdout, then serves every connection with the service `make` gives it, for ever. A
/// failed accept is told on stderr as `NAME: accept: …`, and the loop goes on.
pub async fn serve<S, B>(name: &str, addr: &str, make: impl Fn() -> S) -> Result<(), String>
where
    S: hyper::service::Service<
            hyper::Request<hyper::body::Incoming>,
            Response = hyper::Response<B>,
        > + Send
        + 'static,
    S::Future: Send + 'static,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    B: hyper::body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let local = listener
        .local_addr()
        .map_err(|e| format!("cannot read the bound address: {e}"))?;
    println!("http://{local}/mcp");
    loop {
        let (stream, _) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                eprintln!("{name}: accept: {e}");
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let service = make();
        tokio::spawn(async move {
            let io = hyper_util::rt::TokioIo::new(stream);
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(io, service)
                .await;
        });
    }
}
