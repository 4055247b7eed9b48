//! `http_reply`: the client's own HTTP/1.1 (`client/wire.rs`: its reply-head parser and
//! its chunked decoder) reading a server's reply, against hyper's client connection on the
//! same bytes.
//!
//! The input's first byte says how many of the next bytes are read sizes (its low four
//! bits: 0 to 15, each size 1 to 256, used in turn); the rest is the reply to a POST, after
//! which the server closes the connection. Checks: nothing panics or hangs; what ours makes
//! of the reply (refused, or a status and a body) does not depend on how the bytes were
//! split into reads (one read is the reference); and ours is never more lenient than
//! hyper: a reply ours accepts, hyper accepts too, with the same status and the same body.
//! (Ours refuses some that hyper takes: a reply framed both by `Transfer-Encoding` and by
//! `Content-Length`, a `Content-Length` list, heads over 64 KiB.)

use mcp_transport_http::fuzzing::{reply, reply_by_hyper};

/// One input: see the module docs.
pub fn run(input: &[u8]) {
    let Some((&first, rest)) = input.split_first() else {
        return;
    };
    let (sizes, bytes) = rest.split_at(usize::from(first & 0x0f).min(rest.len()));
    let sizes: Vec<usize> = sizes.iter().map(|&s| usize::from(s) + 1).collect();

    let whole = reply(bytes, &[]);
    let split = reply(bytes, &sizes);
    assert_eq!(whole, split, "the reply depends on how it was read");
    if let Some(ours) = whole {
        let theirs = reply_by_hyper(bytes);
        assert_eq!(
            Some(&ours),
            theirs.as_ref(),
            "ours accepted a reply hyper reads otherwise"
        );
    }
}
