//! The network policy: which addresses a tool may connect to. By default only public ones:
//! loopback, private, link-local, unique-local, reserved and cloud-metadata addresses are
//! refused unless the configuration allows them, also when an IPv6 address carries one (mapped,
//! compatible, NAT64 or 6to4).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use reqwest::Url;

use super::error::{ErrorKind, ToolError};

/// Where the network tools may connect.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct NetworkPolicy {
    /// Allow loopback, private and link-local addresses (never cloud metadata endpoints).
    pub(crate) allow_private: bool,
    /// Hosts (names or addresses) allowed whatever they resolve to.
    pub(crate) allowed_hosts: Vec<String>,
}

/// Refuses an address the policy does not allow, for the tool `who`, saying which setting would
/// allow it.
pub(crate) fn check(policy: &NetworkPolicy, who: &str, host: &str, ip: IpAddr) -> Result<(), ToolError> {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if policy.allowed_hosts.iter().any(|allowed| allowed.eq_ignore_ascii_case(host) || *allowed == ip.to_string()) {
        return Ok(());
    }
    let Some(kind) = restricted(ip) else { return Ok(()) };
    if policy.allow_private && kind != "cloud metadata" {
        return Ok(());
    }
    let setting = if kind == "cloud metadata" {
        "network.allowed_hosts"
    } else {
        "network.allow_private or network.allowed_hosts"
    };
    Err(ToolError::permission(format!(
        "{who} refused {host}: it resolves to {ip}, a {kind} address (allow it with {setting} in your config.json)"
    )))
}

/// The address to connect to for `url`, for the tool `who` (named in errors): the URL must be
/// http or https and every address its host resolves to must be one `policy` allows. The first
/// is returned, so that the connection can be pinned to an address that was checked.
pub(crate) async fn checked_address(policy: &NetworkPolicy, who: &str, url: &Url) -> Result<SocketAddr, ToolError> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(ToolError::value(format!("{who} only fetches http and https URLs, not {}:", url.scheme())));
    }
    let host = url.host_str().ok_or_else(|| ToolError::value(format!("{who} URL {url} has no host")))?;
    let port = url.port_or_known_default().unwrap_or(80);
    let addresses: Vec<SocketAddr> = match url.host() {
        Some(url::Host::Ipv4(ip)) => vec![SocketAddr::new(IpAddr::V4(ip), port)],
        Some(url::Host::Ipv6(ip)) => vec![SocketAddr::new(IpAddr::V6(ip), port)],
        _ => tokio::net::lookup_host((host, port))
            .await
            .map_err(|e| ToolError::new(ErrorKind::Os, format!("{who} cannot resolve {host}: {e}")))?
            .collect(),
    };
    let first =
        *addresses.first().ok_or_else(|| ToolError::new(ErrorKind::Os, format!("{who} {host} has no address")))?;
    for address in &addresses {
        check(policy, who, host, address.ip())?;
    }
    Ok(first)
}

/// What kind of non-public address `ip` is, if it is one.
#[must_use]
pub(crate) fn restricted(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => restricted_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = embedded_v4(v6) {
                return restricted_v4(v4);
            }
            let first = v6.segments()[0];
            if v6 == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254) {
                Some("cloud metadata")
            } else if v6.is_loopback() {
                Some("loopback")
            } else if v6.is_unspecified() {
                Some("unspecified")
            } else if first & 0xfe00 == 0xfc00 {
                Some("unique-local")
            } else if first & 0xffc0 == 0xfe80 {
                Some("link-local")
            } else {
                None
            }
        }
    }
}

/// The IPv4 address an IPv6 one leads to: mapped (`::ffff:a.b.c.d`), compatible (`::a.b.c.d`),
/// NAT64 (`64:ff9b::/96`, `64:ff9b:1::/48`, which a NAT64 gateway forwards to that address) or
/// 6to4 (`2002:aabb:ccdd::/48`).
fn embedded_v4(v6: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = v6.segments();
    let low = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
    match s {
        // `::` and `::1` are themselves, not 0.0.0.0 and 0.0.0.1.
        [0, 0, 0, 0, 0, 0, 0, _] => None,
        [0, 0, 0, 0, 0, 0 | 0xffff, hi, lo] | [0x64, 0xff9b, 0, 0, 0, 0, hi, lo] | [0x2002, hi, lo, ..] => {
            Some(low(hi, lo))
        }
        [0x64, 0xff9b, 1, ..] => Some(low(s[6], s[7])),
        _ => None,
    }
}

fn restricted_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, ..] = ip.octets();
    // AWS, Alibaba and Azure's (the WireServer, which also hands out a VM's settings).
    let metadata =
        [Ipv4Addr::new(169, 254, 169, 254), Ipv4Addr::new(100, 100, 100, 200), Ipv4Addr::new(168, 63, 129, 16)];
    if metadata.contains(&ip) {
        Some("cloud metadata")
    } else if ip.is_loopback() {
        Some("loopback")
    } else if ip.is_private() {
        Some("private")
    } else if ip.is_link_local() {
        Some("link-local")
    } else if a == 100 && (64..128).contains(&b) {
        Some("shared (carrier-grade NAT)")
    } else if a == 198 && (18..20).contains(&b) {
        // Benchmarking networks, which proxies with "fake IP" DNS hand out for any name.
        Some("benchmarking")
    } else if ip.is_unspecified() || a == 0 || a >= 240 || ip.is_broadcast() || ip.is_multicast() {
        Some("reserved")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_public_addresses_are_recognised() {
        for (ip, kind) in [
            ("127.0.0.1", "loopback"),
            ("10.1.2.3", "private"),
            ("172.16.0.1", "private"),
            ("192.168.1.1", "private"),
            ("169.254.169.254", "cloud metadata"),
            ("169.254.1.1", "link-local"),
            ("100.64.0.1", "shared (carrier-grade NAT)"),
            ("0.0.0.0", "reserved"),
            ("::1", "loopback"),
            ("fd00:ec2::254", "cloud metadata"),
            ("fc00::1", "unique-local"),
            ("fe80::1", "link-local"),
            ("::ffff:10.0.0.1", "private"),
            ("168.63.129.16", "cloud metadata"),
            ("198.18.0.1", "benchmarking"),
            ("198.19.255.254", "benchmarking"),
            ("240.0.0.1", "reserved"),
            ("::127.0.0.1", "loopback"),
            ("64:ff9b::10.0.0.1", "private"),
            ("64:ff9b::169.254.169.254", "cloud metadata"),
            ("64:ff9b:1::7f00:1", "loopback"),
            ("2002:c0a8:101::1", "private"),
            ("2002:a9fe:a9fe::", "cloud metadata"),
        ] {
            assert_eq!(restricted(ip.parse().unwrap()), Some(kind), "{ip}");
        }
        for public in ["93.184.216.34", "198.20.0.1", "64:ff9b::5db8:d822", "2606:4700::1111", "2002:5db8:d822::1"] {
            assert_eq!(restricted(public.parse().unwrap()), None, "{public}");
        }
    }

    #[test]
    fn policy_allows_private_addresses_and_listed_hosts_but_never_metadata_by_default() {
        let loopback: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);
        let metadata: IpAddr = IpAddr::V4(Ipv4Addr::new(169, 254, 169, 254));
        let strict = NetworkPolicy::default();
        assert!(check(&strict, "t", "localhost", loopback).is_err());
        let private = NetworkPolicy { allow_private: true, allowed_hosts: Vec::new() };
        assert!(check(&private, "t", "localhost", loopback).is_ok());
        assert!(check(&private, "t", "metadata", metadata).is_err());
        let listed = NetworkPolicy { allow_private: false, allowed_hosts: vec!["127.0.0.1".into()] };
        assert!(check(&listed, "t", "127.0.0.1", loopback).is_ok());
        assert!(check(&listed, "t", "10.0.0.1", "10.0.0.1".parse().unwrap()).is_err());
    }
}
