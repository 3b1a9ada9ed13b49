//! Helpers shared by the IPv6 elements: addresses written as Click writes them.

use std::fmt;
use std::net::Ipv6Addr;

use sluice_lang::args::FromArg;

/// An IPv6 address argument or handler value, shown as Click shows IPv6 addresses: RFC 5952
/// compression (the first of the longest runs of zero fields becomes `::`), except that
/// addresses whose first 96 bits are zero, or which are IPv4-mapped (`::ffff:0:0/96`), end
/// in dotted IPv4 notation (`::0.0.0.1`, `::ffff:198.18.0.1`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Ip6(pub Ipv6Addr);

impl fmt::Display for Ip6 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let o = self.0.octets();
        let w = self.0.segments();
        if w[..5].iter().all(|&x| x == 0) && (w[5] == 0 || w[5] == 0xffff) {
            if w[5] == 0 && w[6] == 0 && w[7] == 0 {
                return f.write_str("::");
            }
            let mapped = if w[5] == 0 { "" } else { "ffff:" };
            return write!(f, "::{}{}.{}.{}.{}", mapped, o[12], o[13], o[14], o[15]);
        }
        // The first longest run of zero fields, if at least two long.
        let (mut best, mut best_len, mut run) = (0, 0, 0);
        for (i, &x) in w.iter().enumerate() {
            run = if x == 0 { run + 1 } else { 0 };
            if run > best_len {
                (best, best_len) = (i + 1 - run, run);
            }
        }
        let mut i = 0;
        while i < 8 {
            if i == best && best_len > 1 {
                f.write_str(if i + best_len == 8 { "::" } else { ":" })?;
                i += best_len;
                continue;
            }
            if i > 0 {
                f.write_str(":")?;
            }
            write!(f, "{:x}", w[i])?;
            i += 1;
        }
        Ok(())
    }
}

impl FromArg for Ip6 {
    fn from_arg(s: &str) -> Result<Self, String> {
        Ipv6Addr::from_arg(s).map(Ip6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(s: &str) -> String {
        Ip6(s.parse().unwrap()).to_string()
    }

    #[test]
    fn written_as_click_writes_them() {
        assert_eq!(show("::"), "::");
        assert_eq!(show("::1"), "::0.0.0.1");
        assert_eq!(show("::ffff:198.18.0.1"), "::ffff:198.18.0.1");
        assert_eq!(show("2001:db8::1"), "2001:db8::1");
        assert_eq!(show("2001:db8:0:0:1::"), "2001:db8:0:0:1::");
        assert_eq!(show("2001:0:0:1:0:0:0:2"), "2001:0:0:1::2");
        assert_eq!(show("2001:0:0:1:0:0:2:3"), "2001::1:0:0:2:3");
        assert_eq!(show("2001:db8::"), "2001:db8::");
        assert_eq!(show("0:0:0:0:0:1:2:3"), "::1:2:3");
        assert_eq!(show("1:0:2:3:4:5:6:7"), "1:0:2:3:4:5:6:7");
        assert_eq!(show("fe80::200:ff:fe00:1"), "fe80::200:ff:fe00:1");
        assert_eq!(
            show("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"),
            "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"
        );
    }
}
