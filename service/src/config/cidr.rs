//! Address ranges in CIDR notation, as `--trusted-proxy` names the proxies whose
//! `X-Forwarded-For` is believed (see [`crate::app::client`] for how the client is read).

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

/// A range of addresses in CIDR notation (`10.0.0.0/8`, `2001:db8::/32`), or one address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cidr {
    /// The range's first address (its bits past the prefix are zero).
    network: IpAddr,
    /// The prefix length: 0 to 32 for IPv4, 0 to 128 for IPv6.
    prefix: u8,
}

impl Cidr {
    /// Parses `ADDRESS/PREFIX` or a single `ADDRESS` (the same as `/32` or `/128`). The address's
    /// bits past the prefix must be zero (`10.0.0.1/8` is refused, naming `10.0.0.0/8`): a
    /// range written with them is more likely a mistake than a wish.
    pub fn parse(text: &str) -> Result<Cidr, String> {
        let text = text.trim();
        let (address, prefix) = match text.split_once('/') {
            Some((address, prefix)) => (address, Some(prefix)),
            None => (text, None),
        };
        let network = IpAddr::from_str(address)
            .map_err(|_| format!("{text:?} is not an IP address or a CIDR range"))?;
        let width = match network {
            IpAddr::V4(_) => 32,
            IpAddr::V6(_) => 128,
        };
        let prefix = match prefix {
            None => width,
            Some(digits) => match digits.parse::<u8>() {
                Ok(n) if n <= width && !digits.starts_with('+') => n,
                _ => {
                    return Err(format!(
                        "{text:?}: the prefix length must be a number from 0 to {width}"
                    ));
                }
            },
        };
        let cidr = Cidr { network, prefix };
        let masked = cidr.masked(network);
        if masked != network {
            return Err(format!(
                "{text:?} has bits set past its /{prefix} prefix (the range is {masked}/{prefix})"
            ));
        }
        Ok(cidr)
    }

    /// `address` with its bits past this range's prefix cleared.
    fn masked(&self, address: IpAddr) -> IpAddr {
        match address {
            IpAddr::V4(v4) => {
                let mask = u32::MAX
                    .checked_shl(32 - u32::from(self.prefix))
                    .unwrap_or(0);
                IpAddr::V4(Ipv4Addr::from(u32::from(v4) & mask))
            }
            IpAddr::V6(v6) => {
                let mask = u128::MAX
                    .checked_shl(128 - u32::from(self.prefix))
                    .unwrap_or(0);
                IpAddr::V6(Ipv6Addr::from(u128::from(v6) & mask))
            }
        }
    }

    /// Whether `address` is in the range. An IPv4-mapped IPv6 address is its IPv4 address.
    pub fn contains(&self, address: IpAddr) -> bool {
        let address = address.to_canonical();
        match (self.network, address) {
            (IpAddr::V4(_), IpAddr::V4(_)) | (IpAddr::V6(_), IpAddr::V6(_)) => {
                self.masked(address) == self.network
            }
            _ => false,
        }
    }
}

impl FromStr for Cidr {
    type Err = String;

    fn from_str(text: &str) -> Result<Cidr, String> {
        Cidr::parse(text)
    }
}

impl fmt::Display for Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.network, self.prefix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_parse_in_both_families_and_single_addresses_are_hosts() {
        assert_eq!(
            Cidr::parse("10.0.0.0/8").expect("v4").to_string(),
            "10.0.0.0/8"
        );
        assert_eq!(
            Cidr::parse(" 2001:db8::/32 ").expect("v6").to_string(),
            "2001:db8::/32"
        );
        assert_eq!(
            Cidr::parse("127.0.0.1").expect("host").to_string(),
            "127.0.0.1/32"
        );
        assert_eq!(Cidr::parse("::1").expect("host").to_string(), "::1/128");
        assert_eq!(
            Cidr::parse("0.0.0.0/0").expect("all").to_string(),
            "0.0.0.0/0"
        );
        assert_eq!(Cidr::parse("::/0").expect("all").to_string(), "::/0");
        assert_eq!(
            "192.168.0.0/16".parse::<Cidr>(),
            Cidr::parse("192.168.0.0/16")
        );
    }

    #[test]
    fn bad_ranges_are_refused_naming_the_text() {
        for (bad, says) in [
            ("", "not an IP address"),
            ("proxy.internal", "not an IP address"),
            ("10.0.0/8", "not an IP address"),
            ("10.0.0.0/", "from 0 to 32"),
            ("10.0.0.0/33", "from 0 to 32"),
            ("10.0.0.0/-1", "from 0 to 32"),
            ("10.0.0.0/+8", "from 0 to 32"),
            ("10.0.0.0/8/8", "from 0 to 32"),
            ("10.0.0.0/eight", "from 0 to 32"),
            ("2001:db8::/129", "from 0 to 128"),
            ("10.0.0.1/8", "the range is 10.0.0.0/8"),
            ("2001:db8::1/64", "the range is 2001:db8::/64"),
            ("fe80::1%eth0/64", "not an IP address"),
        ] {
            let e = Cidr::parse(bad).expect_err(bad);
            assert!(e.contains(says), "{bad}: {e}");
            assert!(e.contains(&format!("{:?}", bad.trim())), "{bad}: {e}");
        }
    }

    #[test]
    fn ranges_hold_their_addresses_only() {
        let net = Cidr::parse("10.1.0.0/16").expect("range");
        assert!(net.contains("10.1.0.0".parse().expect("ip")));
        assert!(net.contains("10.1.255.255".parse().expect("ip")));
        assert!(!net.contains("10.2.0.0".parse().expect("ip")));
        // An IPv4-mapped IPv6 peer is its IPv4 address.
        assert!(net.contains("::ffff:10.1.2.3".parse().expect("ip")));
        assert!(!net.contains("2001:db8::1".parse().expect("ip")));
        let v6 = Cidr::parse("2001:db8:aa::/48").expect("range");
        assert!(v6.contains("2001:db8:aa:ffff::1".parse().expect("ip")));
        assert!(!v6.contains("2001:db8:ab::1".parse().expect("ip")));
        assert!(!v6.contains("10.1.2.3".parse().expect("ip")));
        let all = Cidr::parse("0.0.0.0/0").expect("range");
        assert!(all.contains("203.0.113.9".parse().expect("ip")));
    }
}
