package ssrf

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestCheck(t *testing.T) {
	t.Parallel()
	tests := []struct {
		ip   string
		want string // "" allowed, else a word of the reason
	}{
		{"93.184.216.34", ""},
		{"8.8.8.8", ""},
		{"2606:4700:4700::1111", ""},
		{"127.0.0.1", "loopback"},
		{"127.255.0.9", "loopback"},
		{"::1", "loopback"},
		{"::ffff:127.0.0.1", "loopback"},
		{"10.0.0.1", "private"},
		{"172.16.5.4", "private"},
		{"192.168.1.1", "private"},
		{"fd12::1", "private"},
		{"169.254.169.254", "metadata"},
		{"::ffff:169.254.169.254", "metadata"},
		{"169.254.1.1", "link-local"},
		{"fe80::1", "link-local"},
		{"0.0.0.0", "unspecified"},
		{"::", "unspecified"},
		{"0.1.2.3", "reserved"},
		{"100.100.100.200", "reserved"},
		{"239.1.2.3", "multicast"},
		{"255.255.255.255", "reserved"},
		// IPv6 forms that carry an IPv4 address are judged by it.
		{"64:ff9b::a00:1", "private"},
		{"64:ff9b::7f00:1", "loopback"},
		{"64:ff9b::808:808", ""},
		{"2002:7f00:1::", "loopback"},
		{"2002:a9fe:a9fe::1", "metadata"},
		{"2002:808:808::1", ""},
		{"::7f00:1", "loopback"},
		{"::127.0.0.1", "loopback"},
		{"::a9fe:a9fe", "metadata"},
		{"::a00:1", "private"},
		{"::0.0.0.2", "reserved"},
		{"::ffff:0:7f00:1", "loopback"},
		{"::ffff:0:a9fe:a9fe", "metadata"},
		{"::ffff:0:c0a8:101", "private"},
		{"64:ff9b:1::7f00:1", "reserved"},
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", "reserved"},
		{"fec0::1", "site-local"},
		{"feff::1", "site-local"},
	}
	for _, tt := range tests {
		err := Check(netip.MustParseAddr(tt.ip))
		if tt.want == "" {
			if err != nil {
				t.Errorf("%s: refused: %v", tt.ip, err)
			}
			continue
		}
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err %v, want a refusal mentioning %q", tt.ip, err, tt.want)
		}
	}
}

func TestClientRefusesAfterResolution(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(204) }))
	defer srv.Close()
	c, err := NewClient(Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	port := srv.URL[strings.LastIndex(srv.URL, ":"):]
	// "localhost" is resolved first and refused on the resolved address.
	for _, u := range []string{srv.URL, "http://localhost" + port, "http://[::1]" + port} {
		_, err := c.Get(u)
		if !errors.Is(err, ErrRefused) {
			t.Errorf("GET %s: err %v, want a refusal", u, err)
		}
	}
	open, err := NewClient(Options{AllowPrivate: true, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := open.Get("http://localhost" + port)
	if err != nil {
		t.Fatalf("with AllowPrivate: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 204 {
		t.Errorf("status %d", resp.StatusCode)
	}
}

func TestClientFollowsNoRedirect(t *testing.T) {
	t.Parallel()
	hit := make(chan string, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hit <- r.URL.Path
		http.Redirect(w, r, "/elsewhere", http.StatusFound)
	}))
	defer srv.Close()
	c, _ := NewClient(Options{AllowPrivate: true, Timeout: 5 * time.Second})
	resp, err := c.Post(srv.URL+"/hook", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || len(hit) != 1 {
		t.Errorf("status %d after %d requests, want the 302 itself", resp.StatusCode, len(hit))
	}
}

func TestCAFile(t *testing.T) {
	t.Parallel()
	if _, err := NewClient(Options{CAFile: "/nonexistent.pem"}); err == nil {
		t.Error("missing CA file accepted")
	}
}

func FuzzCheck(f *testing.F) {
	f.Add([]byte{127, 0, 0, 1})
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		ip, ok := netip.AddrFromSlice(b)
		if !ok {
			return
		}
		err := Check(ip)
		// The IPv4 rules must not be bypassed by an IPv6 form that
		// carries the address.
		if ip.Is4() {
			b := ip.As4()
			for _, form := range []string{"::ffff:%d.%d.%d.%d", "::%d.%d.%d.%d", "::ffff:0:%d.%d.%d.%d", "64:ff9b::%d.%d.%d.%d"} {
				v6 := netip.MustParseAddr(fmt.Sprintf(form, b[0], b[1], b[2], b[3]))
				if v6 == netip.IPv6Loopback() || v6 == netip.IPv6Unspecified() {
					continue
				}
				if (err == nil) != (Check(v6) == nil) {
					t.Errorf("%s and %s disagree", ip, v6)
				}
			}
		}
		if ip.Unmap().IsLoopback() && err == nil {
			t.Errorf("loopback %s allowed", ip)
		}
	})
}

// recordingResolver is a resolver that records each lookup and answers
// none, so a test sees whether a name was resolved.
func recordingResolver(looked *atomic.Int64) *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		looked.Add(1)
		return nil, errors.New("no DNS in this test")
	}}
}

// Numeric hosts in inet_aton spellings, which Go's resolver would look up
// as names, are refused before any lookup or connection.
func TestClientRefusesNumericHostsUnresolved(t *testing.T) {
	t.Parallel()
	var looked atomic.Int64
	c, err := NewClient(Options{Timeout: 5 * time.Second, Resolver: recordingResolver(&looked)})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"https://2130706433/c", "https://0x7f000001/c", "https://127.1/c", "https://0177.0.0.1/c",
		"https://2852039166/latest", "https://localhost/c", "https://[::127.0.0.1]/c"} {
		_, err := c.Get(u)
		if !errors.Is(err, ErrRefused) {
			t.Errorf("GET %s: err %v, want a refusal", u, err)
		}
	}
	if n := looked.Load(); n != 0 {
		t.Errorf("%d DNS lookups, want none", n)
	}
	// A name is still resolved (and here fails to).
	if _, err := c.Get("https://hooks.example.com/c"); err == nil || errors.Is(err, ErrRefused) || looked.Load() == 0 {
		t.Errorf("a name: err %v after %d lookups, want a lookup failure", err, looked.Load())
	}
}
