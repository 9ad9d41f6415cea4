package ssrf

import (
	"errors"
	"testing"
)

// Every spelling of a non-public address is refused before anything is
// resolved; names and public addresses pass.
func TestCheckHost(t *testing.T) {
	t.Parallel()
	refused := []string{
		"127.0.0.1", "127.1", "2130706433", "0x7f000001", "0x7f.1", "0X7F.0.0.1", "0177.0.0.1", "017700000001", "127.0.0.1.",
		"169.254.169.254", "0xa9fea9fe", "2852039166", "169.254.43518",
		"10.0.0.1", "10.1", "012.0.0.1", "192.168.0.1", "172.16.0.1", "0", "0.0.0.0", "0x0",
		"::1", "::ffff:127.0.0.1", "::ffff:7f00:1", "fe80::1%eth0", "fd00:ec2::254", "::", "0:0:0:0:0:0:0:1",
		"::127.0.0.1", "::7f00:1", "::a9fe:a9fe", "::ffff:0:7f00:1", "::ffff:0:127.0.0.1", "64:ff9b::127.0.0.1", "2002:7f00:1::", "fec0::1",
		"localhost", "LOCALHOST", "api.localhost", "localhost.",
		"1.2.3.4.5", "999999999999", "256.1.1.1", "1.2.3.256", "1.2.65536", "4294967296", "1..2.3", "example.123", "08.1.1.1",
		"[::1]", "",
	}
	for _, h := range refused {
		if err := CheckHost(h); !errors.Is(err, ErrRefused) {
			t.Errorf("%q: %v, want refused", h, err)
		}
	}
	allowed := []string{"example.com", "hooks.example.com.", "8.8.8.8", "134744072", "0x8.0x8.0x8.0x8", "2606:4700:4700::1111",
		"1e100.net", "a0x1.example", "0x1g", "localhost.example.com", "93.184.216.34"}
	for _, h := range allowed {
		if err := CheckHost(h); err != nil {
			t.Errorf("%q: %v", h, err)
		}
	}
}
