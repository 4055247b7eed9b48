//! Tests of the client's HTTP/1.1 (`wire.rs`): heads, framing, chunks, recycling.

use super::*;

fn decode_all(mut input: BytesMut) -> io::Result<(Vec<u8>, bool)> {
    let mut chunk = Chunk::Size;
    let mut out = Vec::new();
    loop {
        match decode_chunk(&mut chunk, &mut input)? {
            Step::Data(data) => out.extend_from_slice(&data),
            Step::Next => {}
            Step::More => return Ok((out, false)),
            Step::End => return Ok((out, input.is_empty())),
        }
    }
}

#[test]
fn a_content_head_keeps_what_callers_read_and_frames_as_a_full_one() {
    let (ours, _theirs) = tokio::io::duplex(64);
    let mut conn = Conn::new(TokioIo::new(ours));
    let head: &[u8] = b"HTTP/1.1 200 OK\r\nDate: Fri, 04 Dec 2026 02:38:28 GMT\r\n\
        CONTENT-type: application/json\r\nX-Other: 1\r\nContent-Length: 5\r\n\
        location: /a\r\nWWW-Authenticate: Bearer\r\nconnection: keep-alive\r\n\r\nhello";
    for kept in [Kept::All, Kept::Content] {
        conn.read = BytesMut::from(head);
        let Parsed::Head(parsed) = conn.parse_head(false, kept).unwrap() else {
            panic!("a whole head");
        };
        assert!(matches!(parsed.framing, Framing::Length(5)), "{kept:?}");
        assert!(parsed.keep_alive, "{kept:?}");
        assert_eq!(conn.read, &b"hello"[..], "{kept:?}");
        let names: Vec<&str> = parsed
            .headers
            .as_ref()
            .unwrap()
            .keys()
            .map(HeaderName::as_str)
            .collect();
        match kept {
            Kept::All => assert_eq!(
                names,
                [
                    "date",
                    "content-type",
                    "x-other",
                    "content-length",
                    "location",
                    "www-authenticate",
                    "connection"
                ]
            ),
            Kept::Content => {
                assert_eq!(names, ["content-type", "location", "www-authenticate"]);
            }
        }
        let headers = parsed.headers.as_ref().unwrap();
        assert_eq!(headers[CONTENT_TYPE], "application/json");
        assert_eq!(headers[LOCATION], "/a");
        assert_eq!(headers[WWW_AUTHENTICATE], "Bearer");
    }
    // An interim reply is skipped, and any media type is kept as it came.
    for kept in [Kept::All, Kept::Content] {
        conn.read = BytesMut::from(
            &b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n\
               Content-Type: text/event-stream; charset=utf-8\r\n\
               Transfer-Encoding: chunked\r\n\r\n0\r\n"[..],
        );
        assert!(matches!(conn.parse_head(false, kept), Ok(Parsed::Skipped)));
        let Parsed::Head(parsed) = conn.parse_head(false, kept).unwrap() else {
            panic!("a whole head");
        };
        assert_eq!(
            parsed.headers.unwrap()[CONTENT_TYPE],
            "text/event-stream; charset=utf-8"
        );
        assert_eq!(conn.read, &b"0\r\n"[..], "{kept:?}");
    }
    // The framing fields are read in either case: a close, and chunks.
    let head: &[u8] = b"HTTP/1.1 200 OK\r\nConnection: close\r\n\
        Transfer-Encoding: chunked\r\n\r\n";
    for kept in [Kept::All, Kept::Content] {
        conn.read = BytesMut::from(head);
        let Parsed::Head(parsed) = conn.parse_head(false, kept).unwrap() else {
            panic!("a whole head");
        };
        assert!(
            matches!(parsed.framing, Framing::Chunked(Chunk::Size)),
            "{kept:?}"
        );
        assert!(!parsed.keep_alive, "{kept:?}");
    }
    // Chunks and a length, or chunks over HTTP/1.0: framed two ways, refused.
    for head in [
        &b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"[..],
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\ncontent-length: 3\r\n\r\n",
        b"HTTP/1.1 204 No Content\r\nTransfer-Encoding: gzip\r\nContent-Length: 0\r\n\r\n",
        b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n",
        // A coding list that is not text.
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gz\xffp, chunked\r\n\r\n",
    ] {
        for kept in [Kept::All, Kept::Content] {
            conn.read = BytesMut::from(head);
            let err = conn.parse_head(false, kept).err().expect("refused");
            assert_eq!(err.kind(), std::io::ErrorKind::InvalidData, "{kept:?}");
        }
    }
    // Names of the lengths looked up that are other names.
    for name in ["locatiox", "connectiox", "content-typf", "content-lengtx"] {
        assert_eq!(framing_name(name.as_bytes()), None, "{name}");
    }
    assert_eq!(framing_name(b"TRANSFER-ENCODING"), Some(TRANSFER_ENCODING));
}

/// A success whose only kept field is exactly `application/json` or
/// `text/event-stream` tells its media type in its head and leaves its map empty (and
/// the spare map as it was); any other reply fills its map as before.
#[test]
fn a_usual_reply_tells_its_media_type_without_a_header_map() {
    let (ours, _theirs) = tokio::io::duplex(64);
    let mut conn = Conn::new(TokioIo::new(ours));
    let mut parse = |head: &[u8], kept| {
        conn.read = BytesMut::from(head);
        match conn.parse_head(false, kept).unwrap() {
            Parsed::Head(parsed) => (parsed.media, parsed.headers.unwrap_or_default()),
            _ => panic!("a whole head"),
        }
    };
    let told: [(&[u8], Media); 2] = [
        (
            b"HTTP/1.1 200 OK\r\nDate: x\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n",
            Media::Json,
        ),
        (
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n",
            Media::Sse,
        ),
    ];
    for (head, media) in told {
        let (found, map) = parse(head, Kept::Content);
        assert_eq!(found, media);
        assert!(map.is_empty() && map.capacity() == 0, "{media:?}: {map:?}");
        // Every field kept: the map, as before.
        let (found, map) = parse(head, Kept::All);
        assert_eq!(found, Media::InHeaders);
        assert!(map.contains_key(CONTENT_TYPE));
    }
    let in_headers: [&[u8]; 5] = [
        // An error status.
        b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n",
        // Parameters, or another media type.
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: 2\r\n\r\n",
        b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 2\r\n\r\n",
        // Another kept field, or two content types.
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nlocation: /x\r\ncontent-length: 2\r\n\r\n",
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-type: text/html\r\ncontent-length: 2\r\n\r\n",
    ];
    for head in in_headers {
        let (found, map) = parse(head, Kept::Content);
        assert_eq!(found, Media::InHeaders, "{}", String::from_utf8_lossy(head));
        assert!(map.contains_key(CONTENT_TYPE));
    }
    // A map given back with no room does not replace the spare that has some.
    conn.read =
        BytesMut::from(&b"HTTP/1.1 200 OK\r\nx-a: 1\r\nx-b: 2\r\ncontent-length: 0\r\n\r\n"[..]);
    let Parsed::Head(parsed) = conn.parse_head(false, Kept::All).unwrap() else {
        panic!("a whole head");
    };
    conn.recycle(parsed.headers.unwrap_or_default());
    conn.recycle(HeaderMap::new());
    assert!(conn.spare.as_ref().is_some_and(|map| map.capacity() >= 3));
}

#[test]
fn a_recycled_header_map_holds_only_the_next_reply_s_fields() {
    let (ours, _theirs) = tokio::io::duplex(64);
    let mut conn = Conn::new(TokioIo::new(ours));
    let parse = |conn: &mut Conn<_>, head: &[u8], kept| {
        conn.read = BytesMut::from(head);
        match conn.parse_head(false, kept).unwrap() {
            Parsed::Head(parsed) => parsed.headers.unwrap_or_default(),
            _ => panic!("a whole head"),
        }
    };
    let first = parse(
        &mut conn,
        b"HTTP/1.1 200 OK\r\nx-a: 1\r\nx-b: 2\r\ncontent-type: text/plain\r\n\
          content-length: 0\r\n\r\n",
        Kept::All,
    );
    assert_eq!(first.len(), 4);
    conn.recycle(first);
    // A JSON error: not one whose media type the head tells, so it fills the map.
    let second = parse(
        &mut conn,
        b"HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\ncontent-length: 0\r\n\r\n",
        Kept::Content,
    );
    assert_eq!(second.len(), 1);
    assert_eq!(second[CONTENT_TYPE], "application/json");
    assert!(
        second.capacity() >= 4,
        "the map given back is the one filled"
    );
    conn.recycle(second);
    let third = parse(
        &mut conn,
        b"HTTP/1.1 204 No Content\r\nx-c: 3\r\n\r\n",
        Kept::All,
    );
    assert_eq!(third.len(), 1);
    assert_eq!(third["x-c"], "3");
}

#[test]
fn chunked_bodies_decode_whole_and_cut_at_every_byte() {
    let body: &[u8] = b"5;ext=1\r\nhello\r\n1\r\n \r\n6\r\nworld!\r\n0\r\nx-trailer: 1\r\n\r\n";
    assert_eq!(
        decode_all(BytesMut::from(body)).unwrap(),
        (b"hello world!".to_vec(), true)
    );
    // Fed in two parts cut anywhere, the decoder waits for more and then goes on.
    for cut in 0..body.len() {
        let mut chunk = Chunk::Size;
        let mut input = BytesMut::from(&body[..cut]);
        let mut out = Vec::new();
        let mut ended = false;
        for part in [&body[cut..], &[][..]] {
            loop {
                match decode_chunk(&mut chunk, &mut input).unwrap() {
                    Step::Data(data) => out.extend_from_slice(&data),
                    Step::Next => {}
                    Step::More => break,
                    Step::End => {
                        ended = true;
                        break;
                    }
                }
            }
            input.extend_from_slice(part);
        }
        assert!(ended, "cut at {cut}");
        assert_eq!(out, b"hello world!", "cut at {cut}");
    }
    // Spaces after the size, an extension: taken.
    assert_eq!(
        decode_all(BytesMut::from(&b"2 \t;a=b c\r\nab\r\n0;x\r\n\r\n"[..])).unwrap(),
        (b"ab".to_vec(), true)
    );
}

#[test]
fn bad_chunks_are_errors_and_lines_are_bounded() {
    for bad in [
        &b"zz\r\n"[..],
        b"\r\n",
        b"-1\r\n",
        b"1000000000000000\r\n",
        b"2\r\nabX\r\n",
        // A bare LF or CR where CRLF must be: the size line, after the data, the trailers.
        b"2\nab\r\n0\r\n\r\n",
        b"2\r\nab\n0\r\n\r\n",
        b"2\r\nab\r\n0\n\r\n",
        b"2\r\nab\r\n0\r\n\n",
        b"2\r\nab\r\n0\r\nx: 1\n\r\n",
        b"2;a\rb\r\nab\r\n0\r\n\r\n",
        b"2\r\r\nab\r\n0\r\n\r\n",
        b"2\r\nab\r\n0\r\nx: \r1\r\n\r\n",
        // Whitespace before the size, or within it.
        b" 2\r\nab\r\n0\r\n\r\n",
        b"1 1\r\nabc\r\n0\r\n\r\n",
        // A trailer line that is no field: no colon, a space in the name, a control byte.
        b"0\r\nx-checksum\r\n\r\n",
        b"0\r\nx checksum: 1\r\n\r\n",
        b"0\r\nx-checksum : 1\r\n\r\n",
        b"0\r\nx-checksum: \x01\r\n\r\n",
    ] {
        assert!(decode_all(BytesMut::from(bad)).is_err(), "{bad:?}");
    }
    let long = vec![b'1'; MAX_LINE + 1];
    assert!(decode_all(BytesMut::from(&long[..])).is_err());
    let mut trailers = b"0\r\n".to_vec();
    trailers.extend(std::iter::repeat_n(b'x', MAX_TRAILERS + 1));
    assert!(decode_all(BytesMut::from(&trailers[..])).is_err());
    // Trailer fields: at the count limit taken, one more refused.
    let fields = |n: usize| {
        let mut body = b"0\r\n".to_vec();
        for i in 0..n {
            body.extend_from_slice(format!("x-{i}: {i}\r\n").as_bytes());
        }
        body.extend_from_slice(b"\r\n");
        decode_all(BytesMut::from(&body[..]))
    };
    assert_eq!(fields(MAX_TRAILER_FIELDS).unwrap(), (Vec::new(), true));
    assert!(fields(MAX_TRAILER_FIELDS + 1).is_err());
}

#[test]
fn request_heads_carry_the_origin_form_and_a_length() {
    let mut out = Vec::new();
    let (parts, ()) = http::Request::post("/mcp?x=1")
        .header("host", "example.com")
        .header("mcp-method", "tools/call")
        .body(())
        .unwrap()
        .into_parts();
    encode_head(&mut out, (&parts).into(), None, None, 1234);
    assert_eq!(
        out,
        b"POST /mcp?x=1 HTTP/1.1\r\nhost: example.com\r\nmcp-method: tools/call\r\ncontent-length: 1234\r\n\r\n"
    );
    for (len, text) in [(0, "0"), (7, "7"), (10, "10"), (65536, "65536")] {
        encode_head(&mut out, (&parts).into(), None, None, len);
        let expected = format!("content-length: {text}\r\n\r\n");
        assert!(out.ends_with(expected.as_bytes()), "{len}");
    }
    let (parts, ()) = http::Request::get("/mcp").body(()).unwrap().into_parts();
    encode_head(&mut out, (&parts).into(), None, None, 0);
    assert_eq!(out, b"GET /mcp HTTP/1.1\r\n\r\n");
}

#[test]
fn shared_fields_come_after_the_host_and_before_the_request_s_own() {
    let mut map = HeaderMap::new();
    map.insert("accept", HeaderValue::from_static("application/json"));
    map.append("x-two", HeaderValue::from_static("a"));
    map.append("x-two", HeaderValue::from_static("b"));
    let fields = Fields::new(map);
    let (parts, ()) = http::Request::post("http://example.com/mcp")
        .header("x-own", "1")
        .body(())
        .unwrap()
        .into_parts();
    let host = HeaderValue::from_static("example.com");
    let mut out = Vec::new();
    encode_head(&mut out, (&parts).into(), Some(&host), Some(&fields), 5);
    assert_eq!(
        out,
        b"POST /mcp HTTP/1.1\r\nhost: example.com\r\naccept: application/json\r\nx-two: a\r\nx-two: b\r\nx-own: 1\r\ncontent-length: 5\r\n\r\n"
    );
    // A length among the shared fields is not given twice.
    let mut map = HeaderMap::new();
    map.insert(CONTENT_LENGTH, HeaderValue::from_static("5"));
    let fields = Fields::new(map);
    let (parts, ()) = http::Request::post("/mcp").body(()).unwrap().into_parts();
    encode_head(&mut out, (&parts).into(), None, Some(&fields), 5);
    assert_eq!(out, b"POST /mcp HTTP/1.1\r\ncontent-length: 5\r\n\r\n");
}
