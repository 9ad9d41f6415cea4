// Package ssrf builds the HTTP client webhook deliveries go out through. It
// refuses to connect to loopback, private, link-local, metadata and other
// non-public addresses, checking the address actually dialled after DNS
// resolution (so a hostname that resolves, or is rebound, to 127.0.0.1 gets
// nowhere), never follows redirects and ignores proxy settings.
package ssrf

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"syscall"
	"time"
)

// ErrRefused is wrapped by every refusal; errors.Is(err, ErrRefused) tells a
// refused endpoint from one that is down.
var ErrRefused = errors.New("refused")

// blocked are the ranges no delivery may reach, beyond what netip's
// predicates (loopback, private, link-local, multicast, unspecified) cover.
var blocked = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),   // carrier-grade NAT (and some clouds' metadata, 100.100.100.200)
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"), // documentation
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, and broadcast
	netip.MustParsePrefix("64:ff9b::/96"),    // NAT64: may translate to any IPv4
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use NAT64
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("2002::/16"),       // 6to4: embeds an IPv4 address
	netip.MustParsePrefix("2001::/32"),       // Teredo: embeds an IPv4 address
	netip.MustParsePrefix("100::/64"),        // discard
}

// Check returns nil if ip is a public unicast address, else an error
// wrapping ErrRefused that says why. IPv4-mapped IPv6 addresses are judged
// as the IPv4 address they carry.
func Check(ip netip.Addr) error {
	ip = ip.Unmap().WithZone("")
	why := ""
	switch {
	case !ip.IsValid():
		why = "not an IP address"
	case ip.IsLoopback():
		why = "a loopback address"
	case ip.IsPrivate():
		why = "a private address"
	case ip == netip.AddrFrom4([4]byte{169, 254, 169, 254}) || ip == netip.MustParseAddr("fd00:ec2::254"):
		why = "a cloud metadata address"
	case ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast():
		why = "a link-local address"
	case ip.IsUnspecified():
		why = "an unspecified address"
	case ip.IsMulticast() || ip.IsInterfaceLocalMulticast():
		why = "a multicast address"
	default:
		for _, p := range blocked {
			if p.Contains(ip) {
				why = "a reserved address (" + p.String() + ")"
				break
			}
		}
	}
	if why == "" {
		return nil
	}
	return fmt.Errorf("%w: %s is %s; webhook endpoints must be public (serve with --allow-insecure-webhooks for local development)", ErrRefused, ip, why)
}

// control is a net.Dialer Control hook: it runs after DNS resolution, on the
// exact address about to be connected to.
func control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: cannot parse dialled address %q", ErrRefused, address)
	}
	return Check(ap.Addr())
}

// Options configure NewClient.
type Options struct {
	// AllowPrivate lifts the address rule (development against local
	// receivers). Redirects are still not followed.
	AllowPrivate bool
	// CAFile is a PEM file of roots trusted in addition to the system's.
	CAFile string
	// Timeout bounds a whole request, response body included.
	Timeout time.Duration
	// MaxConnsPerHost bounds idle keep-alive connections kept per host.
	MaxConnsPerHost int
}

// NewClient returns an HTTP client that enforces the rules of the package
// doc. It fails only when CAFile cannot be read or holds no certificate.
func NewClient(o Options) (*http.Client, error) {
	tlsConf := &tls.Config{MinVersion: tls.VersionTLS12}
	if o.CAFile != "" {
		pem, err := os.ReadFile(o.CAFile)
		if err != nil {
			return nil, fmt.Errorf("--webhook-ca-file: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--webhook-ca-file %s: no PEM certificate found", o.CAFile)
		}
		tlsConf.RootCAs = pool
	}
	dialer := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	if !o.AllowPrivate {
		dialer.Control = control
	}
	if o.MaxConnsPerHost <= 0 {
		o.MaxConnsPerHost = 8
	}
	transport := &http.Transport{
		Proxy:                 nil, // a proxy would dial on our behalf, past the check
		DialContext:           dialer.DialContext,
		TLSClientConfig:       tlsConf,
		TLSHandshakeTimeout:   5 * time.Second,
		ResponseHeaderTimeout: o.Timeout,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   o.MaxConnsPerHost,
		IdleConnTimeout:       90 * time.Second,
		ForceAttemptHTTP2:     true,
	}
	return &http.Client{
		Transport: transport,
		Timeout:   o.Timeout,
		// A redirect could point anywhere; the 3xx itself is the answer.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}, nil
}
