//! The client's address behind a trusted proxy: the PROXY protocol (version 2) header a
//! load balancer such as HAProxy sends before the HTTP bytes
//! (<https://www.haproxy.org/download/2.9/doc/proxy-protocol.txt>), or the
//! `X-Forwarded-For` header it adds. Both are believed only from the addresses in
//! [`HttpServerConfig::trusted_proxies`](crate::HttpServerConfig::trusted_proxies):
//! from anyone else a PROXY header is not looked for (its bytes then fail as HTTP) and
//! `X-Forwarded-For` is ignored, so a client cannot choose the address its limits count
//! against.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use http::HeaderMap;
use tokio::io::{AsyncRead, AsyncReadExt as _};

/// The fixed part of a version 2 header: signature, version and command, family, length.
const FIXED: usize = 16;
/// The longest variable part read: the addresses of any family (216 bytes for Unix
/// sockets) and room for the TLVs load balancers add.
pub const MAX_PROXY_HEADER: usize = 1024;

/// Whom a server believes about the client's address.
#[derive(Debug, Clone, Default)]
pub(crate) struct Trust {
    proxies: Vec<IpAddr>,
    proxy_protocol: bool,
}

impl Trust {
    pub(crate) fn new(proxies: &[IpAddr], proxy_protocol: bool) -> Self {
        Trust {
            proxies: proxies.iter().map(IpAddr::to_canonical).collect(),
            proxy_protocol,
        }
    }

    fn trusts(&self, ip: IpAddr) -> bool {
        self.proxies.contains(&ip.to_canonical())
    }

    /// The client's address for a connection from `peer`: the PROXY header's source when
    /// `peer` is a trusted proxy that speaks it (its own address for a `LOCAL` header: a
    /// health check), else `peer`. `None` when a trusted proxy's header cannot be read
    /// within `timeout` or is not a valid version 2 header: the connection is closed.
    pub(crate) async fn connection_peer<I: AsyncRead + Unpin>(
        &self,
        io: &mut I,
        peer: SocketAddr,
        timeout: Duration,
    ) -> Option<SocketAddr> {
        if !self.proxy_protocol || !self.trusts(peer.ip()) {
            return Some(peer);
        }
        let read = async {
            let mut header = vec![0u8; FIXED];
            io.read_exact(&mut header).await.ok()?;
            let length = usize::from(u16::from_be_bytes([header[14], header[15]]));
            if length > MAX_PROXY_HEADER {
                return None;
            }
            header.resize(FIXED + length, 0);
            io.read_exact(&mut header[FIXED..]).await.ok()?;
            Some(header)
        };
        let Ok(Some(header)) = tokio::time::timeout(timeout, read).await else {
            tracing::debug!(%peer, "no readable PROXY header from a trusted proxy");
            return None;
        };
        source_of(&header, peer)
    }

    /// The client's address for a request that came from `peer` (after
    /// [`connection_peer`](Self::connection_peer)): when `peer` is a trusted proxy, the
    /// rightmost `X-Forwarded-For` address that is not one; else `peer`. A header that
    /// does not parse leaves `peer`: the limits then count against the proxy, never
    /// against an address the request chose.
    pub(crate) fn request_peer(&self, headers: &HeaderMap, peer: SocketAddr) -> SocketAddr {
        if self.proxies.is_empty() || !self.trusts(peer.ip()) {
            return peer;
        }
        let mut hops = Vec::new();
        for value in headers.get_all("x-forwarded-for") {
            let Ok(value) = value.to_str() else {
                return peer;
            };
            for hop in value.split(',') {
                let Ok(ip) = hop.trim().parse::<IpAddr>() else {
                    return peer;
                };
                hops.push(ip);
            }
        }
        hops.into_iter()
            .rev()
            .find(|ip| !self.trusts(*ip))
            .map_or(peer, |ip| SocketAddr::new(ip, 0))
    }
}

/// Without the `proxy-protocol` feature no header is believed (the configuration that
/// asks for one is refused before the server starts).
#[cfg(not(feature = "proxy-protocol"))]
fn source_of(_header: &[u8], _peer: SocketAddr) -> Option<SocketAddr> {
    None
}

/// The source address of a version 2 header (`peer` for `LOCAL`, or an address family
/// with no IP, such as a Unix socket); `None` for a header that does not parse.
#[cfg(feature = "proxy-protocol")]
fn source_of(header: &[u8], peer: SocketAddr) -> Option<SocketAddr> {
    use ppp::v2::{Addresses, Command, Header};
    let parsed = Header::try_from(header).ok()?;
    if parsed.command == Command::Local {
        return Some(peer);
    }
    Some(match parsed.addresses {
        Addresses::IPv4(v4) => SocketAddr::new(IpAddr::V4(v4.source_address), v4.source_port),
        Addresses::IPv6(v6) => SocketAddr::new(IpAddr::V6(v6.source_address), v6.source_port),
        _ => peer,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(feature = "proxy-protocol")]
    use ppp::v2::{Addresses, Builder, Command, IPv4, Protocol, Version};

    const PROXY: &str = "10.0.0.2:40000";

    #[cfg(feature = "proxy-protocol")]
    fn header(source: &str) -> Vec<u8> {
        let source: SocketAddr = source.parse().unwrap();
        let SocketAddr::V4(source) = source else {
            panic!("an IPv4 address")
        };
        let addresses = Addresses::IPv4(IPv4::new(
            *source.ip(),
            "10.0.0.9".parse().unwrap(),
            source.port(),
            8080,
        ));
        Builder::with_addresses(Version::Two | Command::Proxy, Protocol::Stream, addresses)
            .build()
            .unwrap()
    }

    fn trust(proxy_protocol: bool) -> Trust {
        Trust::new(&["10.0.0.2".parse().unwrap()], proxy_protocol)
    }

    #[cfg(feature = "proxy-protocol")]
    async fn peer_of(trust: &Trust, bytes: &[u8]) -> Option<SocketAddr> {
        let mut io = bytes;
        trust
            .connection_peer(&mut io, PROXY.parse().unwrap(), Duration::from_secs(1))
            .await
    }

    #[cfg(feature = "proxy-protocol")]
    #[tokio::test]
    async fn a_trusted_proxys_header_names_the_client() {
        let client = peer_of(&trust(true), &header("203.0.113.7:5555")).await;
        assert_eq!(client, Some("203.0.113.7:5555".parse().unwrap()));
    }

    #[cfg(feature = "proxy-protocol")]
    #[tokio::test]
    async fn an_untrusted_peer_is_taken_as_it_is() {
        let untrusted = Trust::new(&["10.0.0.3".parse().unwrap()], true);
        assert_eq!(
            peer_of(&untrusted, &header("203.0.113.7:5555")).await,
            Some(PROXY.parse().unwrap())
        );
        // Without the PROXY protocol, nothing is read either.
        assert_eq!(
            peer_of(&trust(false), b"GET / HTTP/1.1\r\n").await,
            Some(PROXY.parse().unwrap())
        );
    }

    #[cfg(feature = "proxy-protocol")]
    #[tokio::test]
    async fn a_bad_or_missing_header_from_a_trusted_proxy_closes_the_connection() {
        let trust = trust(true);
        assert_eq!(
            peer_of(&trust, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").await,
            None
        );
        assert_eq!(peer_of(&trust, &header("203.0.113.7:1")[..20]).await, None);
        // A declared length at the limit is read; past it, refused unread.
        let mut at = header("203.0.113.7:1")[..FIXED].to_vec();
        at[14..16].copy_from_slice(&u16::try_from(MAX_PROXY_HEADER).unwrap().to_be_bytes());
        at.resize(FIXED + MAX_PROXY_HEADER, 0);
        // Read whole: its addresses (zeros) and TLV padding parse.
        assert!(peer_of(&trust, &at).await.is_some());
        let mut past = at.clone();
        past[14..16].copy_from_slice(&u16::try_from(MAX_PROXY_HEADER + 1).unwrap().to_be_bytes());
        past.push(0);
        assert_eq!(peer_of(&trust, &past).await, None);
    }

    #[test]
    fn x_forwarded_for_is_believed_only_from_a_trusted_proxy() {
        let trust = trust(false);
        let proxy: SocketAddr = PROXY.parse().unwrap();
        let mut headers = HeaderMap::new();
        headers.insert(
            "x-forwarded-for",
            "198.51.100.1, 203.0.113.7".parse().unwrap(),
        );
        assert_eq!(
            trust.request_peer(&headers, proxy),
            "203.0.113.7:0".parse().unwrap()
        );
        // The proxy's own hop is skipped; what a client wrote before it is not believed
        // past the first untrusted hop from the right.
        headers.insert(
            "x-forwarded-for",
            "1.2.3.4, 203.0.113.7, 10.0.0.2".parse().unwrap(),
        );
        assert_eq!(
            trust.request_peer(&headers, proxy),
            "203.0.113.7:0".parse().unwrap()
        );
        // From anyone else, ignored.
        let client: SocketAddr = "192.0.2.1:1234".parse().unwrap();
        assert_eq!(trust.request_peer(&headers, client), client);
        // Garbage: the proxy's address stands.
        headers.insert("x-forwarded-for", "not an address".parse().unwrap());
        assert_eq!(trust.request_peer(&headers, proxy), proxy);
        // No header: the proxy's address.
        assert_eq!(trust.request_peer(&HeaderMap::new(), proxy), proxy);
    }
}
