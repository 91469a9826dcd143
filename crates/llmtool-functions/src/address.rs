//! Which addresses `fetch_url` may reach: public ones, and those the operator allowed by host
//! or address. A page asked for by a model must not reach the machine's own services, the
//! private network, or a cloud's metadata service (`169.254.169.254`).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why `ip` is not public, in words; `None` for a public address.
pub fn private_kind(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => v4_kind(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => v4_kind(v4),
            None => v6_kind(v6),
        },
    }
}

fn v4_kind(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, ..] = ip.octets();
    if ip.is_loopback() {
        Some("a loopback address")
    } else if ip.is_private() {
        Some("a private address")
    } else if ip.is_link_local() {
        Some("a link-local address")
    } else if ip.is_unspecified() || a == 0 {
        Some("an unspecified address")
    } else if a == 100 && (64..128).contains(&b) {
        Some("a shared (carrier-grade NAT) address")
    } else if ip.is_broadcast() || ip.is_multicast() || a >= 240 {
        Some("a broadcast, multicast or reserved address")
    } else if ip.is_documentation() || (a == 198 && (18..20).contains(&b)) {
        Some("a documentation or benchmarking address")
    } else if a == 192 && b == 0 && ip.octets()[2] == 0 {
        // IETF protocol assignments: Oracle Cloud's metadata service is 192.0.0.192.
        Some("a protocol-assignment address (a cloud's metadata service)")
    } else if ip == Ipv4Addr::new(168, 63, 129, 16) {
        Some("Azure's host address (its metadata and agent service)")
    } else {
        None
    }
}

fn v6_kind(ip: Ipv6Addr) -> Option<&'static str> {
    let segments = ip.segments();
    let first = segments[0];
    let embedded = |high: u16, low: u16| Ipv4Addr::from((u32::from(high) << 16) | u32::from(low));
    if segments[..6] == [0; 6] && !ip.is_loopback() && !ip.is_unspecified() {
        // IPv4-compatible (`::a.b.c.d`): the IPv4 address decides.
        return v4_kind(embedded(segments[6], segments[7])).or(Some("an IPv4-compatible address"));
    }
    if first == 0x2002 {
        // 6to4 carries an IPv4 address in its next 32 bits.
        return v4_kind(embedded(segments[1], segments[2]));
    }
    if ip.is_loopback() {
        Some("a loopback address")
    } else if ip.is_unspecified() {
        Some("an unspecified address")
    } else if first & 0xfe00 == 0xfc00 {
        Some("a private (unique local) address")
    } else if first & 0xffc0 == 0xfe80 || first & 0xffc0 == 0xfec0 {
        Some("a link-local or site-local address")
    } else if ip.is_multicast() {
        Some("a multicast address")
    } else if first == 0x2001 && ip.segments()[1] == 0x0db8 {
        Some("a documentation address")
    } else if first == 0x0064 && (segments[1] == 0xff9b) {
        // NAT64 (the well-known prefix, and the local-use 64:ff9b:1::/48) reaches IPv4
        // addresses through it: the embedded one decides.
        if segments[2] == 1 {
            return Some("a local NAT64 address");
        }
        v4_kind(embedded(segments[6], segments[7]))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_metadata_service_loopback_and_private_networks_are_not_public() {
        for (address, kind) in [
            ("169.254.169.254", "a link-local address"),
            ("127.0.0.1", "a loopback address"),
            ("10.1.2.3", "a private address"),
            ("192.168.0.1", "a private address"),
            ("172.16.5.4", "a private address"),
            ("100.64.0.1", "a shared (carrier-grade NAT) address"),
            ("0.0.0.0", "an unspecified address"),
            ("::1", "a loopback address"),
            ("fd00::1", "a private (unique local) address"),
            ("fe80::1", "a link-local or site-local address"),
            ("fec0::1", "a link-local or site-local address"),
            ("192.0.0.192", "a protocol-assignment address (a cloud's metadata service)"),
            ("168.63.129.16", "Azure's host address (its metadata and agent service)"),
            ("::169.254.169.254", "a link-local address"),
            ("::8.8.8.8", "an IPv4-compatible address"),
            ("2002:a9fe:a9fe::1", "a link-local address"),
            ("64:ff9b:1::a9fe:a9fe", "a local NAT64 address"),
            ("::ffff:169.254.169.254", "a link-local address"),
            ("64:ff9b::a9fe:a9fe", "a link-local address"),
        ] {
            assert_eq!(private_kind(address.parse().unwrap()), Some(kind), "{address}");
        }
        for public in ["93.184.215.14", "1.1.1.1", "2606:4700::1111", "2002:5db8:d70e::1"] {
            assert_eq!(private_kind(public.parse().unwrap()), None, "{public}");
        }
    }
}
