//! The client's address, as the app's sign-in limits count it.
//!
//! Without trusted proxies (`--trusted-proxy`) the client is the TCP peer and `X-Forwarded-For` is
//! ignored, whoever sends it. With them, and only when the TCP peer is inside one of their ranges,
//! `X-Forwarded-For` names the client: its entries (every line of the header, in order, split at
//! commas) are read from the right, each hop that is itself a trusted proxy is skipped, and the
//! first hop that is not wins; when every hop is trusted, the leftmost does. An entry that is not
//! an address (`unknown`, an obfuscated name, an empty entry, text that is not UTF-8) ends the walk:
//! the proxy that added it cannot vouch for anything left of it, so the client is the last good hop
//! read, or the peer when there is none. An entry may carry a port (`192.0.2.1:5000`,
//! `[2001:db8::1]:443`); it is dropped.
//!
//! Limits count an address as a [`subject`]: an IPv4 address as it is (an IPv4-mapped IPv6 address
//! as its IPv4 address), an IPv6 address as its /64 prefix, the block one household or host is
//! usually given, so that the 2⁶⁴ addresses of one network do not count as 2⁶⁴ clients.
//!
//! The API's (`/v1`) rate limits are per key and per account, not per address, so none of this
//! changes them.

use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::str::FromStr;

use warp::http::header::HeaderMap;

use crate::config::Cidr;

/// The header proxies name the client in.
pub const FORWARDED_FOR: &str = "x-forwarded-for";

/// The client's address: the peer, or the hop trusted proxies name (see the module's opening).
/// `None` when the connection has no peer address.
pub fn resolve(peer: Option<SocketAddr>, headers: &HeaderMap, trusted: &[Cidr]) -> Option<IpAddr> {
    let peer = peer?.ip().to_canonical();
    let is_trusted = |ip: IpAddr| trusted.iter().any(|range| range.contains(ip));
    if !is_trusted(peer) {
        return Some(peer);
    }
    let hops: Vec<Option<IpAddr>> = headers
        .get_all(FORWARDED_FOR)
        .iter()
        .flat_map(|value| value.as_bytes().split(|b| *b == b','))
        .map(|entry| std::str::from_utf8(entry).ok().and_then(hop))
        .collect();
    let mut client = peer;
    for hop in hops.into_iter().rev() {
        let Some(ip) = hop else { break };
        client = ip;
        if !is_trusted(ip) {
            break;
        }
    }
    Some(client)
}

/// One `X-Forwarded-For` entry's address, without its port; `None` when it is not an address.
fn hop(entry: &str) -> Option<IpAddr> {
    let entry = entry.trim();
    if let Ok(ip) = IpAddr::from_str(entry) {
        return Some(ip.to_canonical());
    }
    if let Ok(with_port) = SocketAddr::from_str(entry) {
        return Some(with_port.ip().to_canonical());
    }
    // `[2001:db8::1]` without a port.
    let bracketed = entry.strip_prefix('[')?.strip_suffix(']')?;
    Ipv6Addr::from_str(bracketed)
        .ok()
        .map(|ip| IpAddr::V6(ip).to_canonical())
}

/// What the limits count an address as: `address:` and the IPv4 address, or the IPv6 address's
/// /64 prefix (`address:2001:db8:1:2::/64`); `address:unknown` without one.
pub fn subject(client: Option<IpAddr>) -> String {
    match client.map(|ip| ip.to_canonical()) {
        Some(IpAddr::V4(v4)) => format!("address:{v4}"),
        Some(IpAddr::V6(v6)) => {
            let prefix = Ipv6Addr::from(u128::from(v6) & (u128::MAX << 64));
            format!("address:{prefix}/64")
        }
        None => "address:unknown".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use warp::http::header::HeaderValue;

    fn ranges(list: &[&str]) -> Vec<Cidr> {
        list.iter()
            .map(|r| Cidr::parse(r).expect("a range"))
            .collect()
    }

    fn headers(forwarded: &[&[u8]]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for value in forwarded {
            map.append(
                FORWARDED_FOR,
                HeaderValue::from_bytes(value).expect("a header value"),
            );
        }
        map
    }

    fn peer(ip: &str) -> Option<SocketAddr> {
        Some(SocketAddr::new(ip.parse().expect("an address"), 40_000))
    }

    fn client(from: &str, forwarded: &[&[u8]], trusted: &[&str]) -> String {
        resolve(peer(from), &headers(forwarded), &ranges(trusted))
            .map_or_else(|| "none".into(), |ip| ip.to_string())
    }

    #[test]
    fn without_trusted_proxies_the_peer_counts_whatever_the_header_says() {
        assert_eq!(client("192.0.2.10", &[b"203.0.113.5"], &[]), "192.0.2.10");
        assert_eq!(client("192.0.2.10", &[], &[]), "192.0.2.10");
        assert_eq!(
            resolve(None, &headers(&[b"203.0.113.5"]), &ranges(&["0.0.0.0/0"])),
            None
        );
    }

    #[test]
    fn an_untrusted_peer_sending_the_header_is_itself_the_client() {
        let trusted = ["10.0.0.0/8"];
        assert_eq!(
            client("192.0.2.10", &[b"203.0.113.5"], &trusted),
            "192.0.2.10"
        );
        assert_eq!(
            client("192.0.2.10", &[b"10.0.0.1, 10.0.0.2"], &trusted),
            "192.0.2.10"
        );
    }

    #[test]
    fn a_trusted_peer_names_the_client() {
        let trusted = ["127.0.0.1/32"];
        assert_eq!(
            client("127.0.0.1", &[b"203.0.113.5"], &trusted),
            "203.0.113.5"
        );
        // No header: the proxy itself.
        assert_eq!(client("127.0.0.1", &[], &trusted), "127.0.0.1");
        // A peer on an IPv4-mapped IPv6 socket is trusted as its IPv4 address.
        assert_eq!(
            client("::ffff:127.0.0.1", &[b"203.0.113.5"], &trusted),
            "203.0.113.5"
        );
    }

    #[test]
    fn hops_are_read_from_the_right_skipping_trusted_proxies() {
        let trusted = ["127.0.0.1/32", "10.0.0.0/8"];
        // client, then two proxies of ours: the client.
        assert_eq!(
            client("127.0.0.1", &[b"203.0.113.5, 10.0.0.7, 10.0.0.8"], &trusted),
            "203.0.113.5"
        );
        // Whatever the client wrote itself, left of the first untrusted hop, is not believed.
        assert_eq!(
            client(
                "127.0.0.1",
                &[b"198.51.100.1, 203.0.113.5, 10.0.0.7"],
                &trusted
            ),
            "203.0.113.5"
        );
        // Every line of the header, in order, as one list.
        assert_eq!(
            client(
                "127.0.0.1",
                &[b"198.51.100.1, 203.0.113.5", b"10.0.0.7"],
                &trusted
            ),
            "203.0.113.5"
        );
        // Every hop trusted: the leftmost.
        assert_eq!(
            client("127.0.0.1", &[b"10.0.0.1, 10.0.0.2"], &trusted),
            "10.0.0.1"
        );
        // Ports are dropped.
        assert_eq!(
            client("127.0.0.1", &[b"203.0.113.5:5123, 10.0.0.7:80"], &trusted),
            "203.0.113.5"
        );
    }

    #[test]
    fn a_malformed_entry_ends_the_walk_at_the_last_good_hop() {
        let trusted = ["127.0.0.1/32", "10.0.0.0/8"];
        for bad in [
            &b"unknown"[..],
            b"",
            b" , ",
            b"proxy.example",
            b"203.0.113.5.1",
            b"_hidden",
            b"[2001:db8::1",
            b"fe80::1%eth0",
            b"203.0.113.5:99999",
            b"\xff\xfe",
        ] {
            // Nothing good read: the peer.
            assert_eq!(
                client("127.0.0.1", &[bad], &trusted),
                "127.0.0.1",
                "{bad:?}"
            );
            // A good trusted hop right of it: that hop.
            let mut line = bad.to_vec();
            line.extend_from_slice(b", 10.0.0.7");
            assert_eq!(
                client("127.0.0.1", &[&line], &trusted),
                "10.0.0.7",
                "{bad:?}"
            );
            // A good untrusted hop right of it is the client anyway.
            let mut line = bad.to_vec();
            line.extend_from_slice(b", 203.0.113.9");
            assert_eq!(
                client("127.0.0.1", &[&line], &trusted),
                "203.0.113.9",
                "{bad:?}"
            );
            // A client-written address left of it is never reached.
            let mut line = b"198.51.100.1, ".to_vec();
            line.extend_from_slice(bad);
            assert_eq!(
                client("127.0.0.1", &[&line], &trusted),
                "127.0.0.1",
                "{bad:?}"
            );
        }
        // A header line that is not text, before a good line, ends the walk there too.
        assert_eq!(
            client("127.0.0.1", &[b"\xff", b"10.0.0.9"], &trusted),
            "10.0.0.9"
        );
    }

    #[test]
    fn ipv6_hops_and_proxies() {
        let trusted = ["::1/128", "fd00::/8"];
        assert_eq!(
            client("::1", &[b"2001:db8:1:2::7, fd00::5"], &trusted),
            "2001:db8:1:2::7"
        );
        assert_eq!(
            client("::1", &[b"[2001:db8:1:2::7]:443"], &trusted),
            "2001:db8:1:2::7"
        );
        assert_eq!(client("::1", &[b"[2001:db8::9]"], &trusted), "2001:db8::9");
        // An IPv4-mapped hop is its IPv4 address.
        assert_eq!(
            client("::1", &[b"::ffff:203.0.113.5"], &trusted),
            "203.0.113.5"
        );
        // An IPv4 proxy range does not trust an IPv6 peer.
        assert_eq!(client("::1", &[b"203.0.113.5"], &["127.0.0.1/32"]), "::1");
    }

    #[test]
    fn ipv6_clients_count_per_64_and_mapped_ipv4_as_ipv4() {
        let of = |ip: &str| subject(Some(ip.parse().expect("ip")));
        assert_eq!(of("203.0.113.5"), "address:203.0.113.5");
        assert_eq!(of("::ffff:203.0.113.5"), "address:203.0.113.5");
        assert_eq!(of("2001:db8:1:2:3:4:5:6"), "address:2001:db8:1:2::/64");
        assert_eq!(of("2001:db8:1:2::ffff"), of("2001:db8:1:2:aaaa::1"));
        assert_ne!(of("2001:db8:1:2::1"), of("2001:db8:1:3::1"));
        assert_eq!(of("::1"), "address:::/64");
        assert_eq!(subject(None), "address:unknown");
    }
}
