// Package ssrf builds the HTTP client webhook deliveries go out through. It
// refuses to connect to loopback, private, link-local, metadata and other
// non-public addresses, checking the address actually dialled after DNS
// resolution (so a hostname that resolves, or is rebound, to 127.0.0.1 gets
// nowhere), never follows redirects and ignores proxy settings.
package ssrf

import (
	"context"
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
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use NAT64: translated by the local network
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("2001::/32"),       // Teredo: its IPv4 part is obfuscated
	netip.MustParsePrefix("100::/64"),        // discard
}

// siteLocal is deprecated (RFC 3879) and private wherever it is still used.
var siteLocal = netip.MustParsePrefix("fec0::/10")

// embedding are the IPv6 forms that carry an IPv4 address, and where its
// four bytes sit: an address of these is judged as the IPv4 address it
// reaches, or 64:ff9b::7f00:1 would be loopback under another name.
var embedding = []struct {
	prefix netip.Prefix
	at     int // offset of the IPv4 bytes in the 16
}{
	{netip.MustParsePrefix("::/96"), 12},           // IPv4-compatible (deprecated): ::127.0.0.1
	{netip.MustParsePrefix("::ffff:0:0:0/96"), 12}, // IPv4-translated (SIIT): ::ffff:0:127.0.0.1
	{netip.MustParsePrefix("64:ff9b::/96"), 12},    // NAT64 well-known prefix
	{netip.MustParsePrefix("2002::/16"), 2},        // 6to4: 2002:AABB:CCDD::
}

// embedded returns the IPv4 address an IPv6 address of an embedding form
// reaches. :: and ::1 are themselves (unspecified, loopback).
func embedded(ip netip.Addr) (netip.Addr, bool) {
	if !ip.Is6() || ip.IsLoopback() || ip.IsUnspecified() {
		return netip.Addr{}, false
	}
	b := ip.As16()
	for _, e := range embedding {
		if e.prefix.Contains(ip) {
			return netip.AddrFrom4([4]byte(b[e.at : e.at+4])), true
		}
	}
	return netip.Addr{}, false
}

// Check returns nil if ip is a public unicast address, else an error
// wrapping ErrRefused that says why. IPv6 addresses that carry an IPv4
// address (mapped, compatible, translated, NAT64, 6to4) are judged as the
// IPv4 address they carry.
func Check(ip netip.Addr) error {
	ip = ip.Unmap().WithZone("")
	if v4, ok := embedded(ip); ok {
		if err := Check(v4); err != nil {
			return fmt.Errorf("%w: %s carries the IPv4 address %s, which is %s; webhook endpoints must be public (serve with --allow-insecure-webhooks for local development)",
				ErrRefused, ip, v4, reason(v4))
		}
		return nil
	}
	if why := reason(ip); why != "" {
		return fmt.Errorf("%w: %s is %s; webhook endpoints must be public (serve with --allow-insecure-webhooks for local development)", ErrRefused, ip, why)
	}
	return nil
}

// reason says why ip is not a public unicast address, "" when it is.
func reason(ip netip.Addr) string {
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
	case siteLocal.Contains(ip):
		why = "a site-local address"
	default:
		for _, p := range blocked {
			if p.Contains(ip) {
				why = "a reserved address (" + p.String() + ")"
				break
			}
		}
	}
	return why
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

// guardedDial judges the host as spelled before the dialer resolves it:
// Go's resolver takes 2130706433 or 0x7f.1 for a DNS name, so without this
// such a host would be looked up (a query the probe can observe) before
// the resolved address is refused. The dialer's Control still judges the
// address actually connected to.
func guardedDial(d *net.Dialer) func(ctx context.Context, network, address string) (net.Conn, error) {
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			return nil, fmt.Errorf("%w: cannot parse address %q", ErrRefused, address)
		}
		if err := CheckHost(host); err != nil {
			return nil, err
		}
		return d.DialContext(ctx, network, address)
	}
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
	// Resolver, when set, resolves names instead of the system's (tests
	// use it to see what is looked up).
	Resolver *net.Resolver
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
	dialer := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second, Resolver: o.Resolver}
	dial := dialer.DialContext
	if !o.AllowPrivate {
		dialer.Control = control
		dial = guardedDial(dialer)
	}
	if o.MaxConnsPerHost <= 0 {
		o.MaxConnsPerHost = 8
	}
	transport := &http.Transport{
		Proxy:                 nil, // a proxy would dial on our behalf, past the check
		DialContext:           dial,
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
