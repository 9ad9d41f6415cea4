package ssrf

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// CheckHost judges a URL's host (brackets and port removed) before anything
// is resolved: nil for a DNS name, or for an IP address that Check allows.
// An address is recognised in every spelling a resolver or browser
// accepts: IPv6 (with a zone or an embedded IPv4 address), dotted IPv4, and
// the shorthand inet_aton forms (2130706433, 0x7f.1, 0177.0.0.1, 127.1).
// localhost and its subdomains are loopback by definition (RFC 6761). A host
// that ends in a number but is no address (1.2.3.4.5, 999999999999) is
// refused as ambiguous. Names are still checked at delivery, on the
// resolved address. Every refusal wraps ErrRefused.
func CheckHost(host string) error {
	name := strings.TrimSuffix(strings.ToLower(host), ".")
	if name == "" {
		return fmt.Errorf("%w: empty host", ErrRefused)
	}
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		return fmt.Errorf("%w: %s is a loopback name; webhook endpoints must be public (serve with --allow-insecure-webhooks for local development)", ErrRefused, host)
	}
	if strings.Contains(name, ":") {
		ip, err := netip.ParseAddr(name)
		if err != nil {
			return fmt.Errorf("%w: %q is not a valid IPv6 address", ErrRefused, host)
		}
		return Check(ip)
	}
	labels := strings.Split(name, ".")
	if !numeric(labels[len(labels)-1]) {
		return nil
	}
	ip, ok := parseIPv4(labels)
	if !ok {
		return fmt.Errorf("%w: %q ends in a number but is not an IPv4 address", ErrRefused, host)
	}
	return Check(ip)
}

// numeric reports whether a label is a number in the sense of the URL
// standard's IPv4 parser: decimal digits, or 0x followed by hex digits.
func numeric(label string) bool {
	if label == "" {
		return false
	}
	if rest, ok := strings.CutPrefix(label, "0x"); ok {
		for _, c := range rest {
			if !strings.ContainsRune("0123456789abcdef", c) {
				return false
			}
		}
		return true
	}
	for _, c := range label {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// parseIPv4 reads one to four inet_aton parts (decimal, 0-prefixed octal,
// 0x-prefixed hex); the last part fills the bytes the others leave.
func parseIPv4(parts []string) (netip.Addr, bool) {
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var v uint64
	for i, p := range parts {
		if p == "" {
			return netip.Addr{}, false
		}
		base, digits := 10, p
		switch {
		case strings.HasPrefix(p, "0x"):
			base, digits = 16, p[2:]
		case len(p) > 1 && p[0] == '0':
			base, digits = 8, p[1:]
		}
		n := uint64(0)
		if digits != "" {
			var err error
			if n, err = strconv.ParseUint(digits, base, 32); err != nil {
				return netip.Addr{}, false
			}
		}
		if i < len(parts)-1 {
			if n > 255 {
				return netip.Addr{}, false
			}
			v = v<<8 | n
			continue
		}
		bits := 8 * uint(5-len(parts))
		if n >= 1<<bits {
			return netip.Addr{}, false
		}
		v = v<<bits | n
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}
