package oauth

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/ssrf"
)

// A metadata document on a loopback or metadata address in any spelling,
// including the decimal and hex IPv4 forms Go's resolver would take for
// names, is refused through the guarded client without a lookup or a
// connection.
func TestDocumentFetchGuardedBeforeResolving(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var looked atomic.Int64
	fetch, err := ssrf.NewClient(ssrf.Options{Timeout: 2 * time.Second, Resolver: &net.Resolver{PreferGo: true,
		Dial: func(context.Context, string, string) (net.Conn, error) {
			looked.Add(1)
			return nil, errors.New("no DNS in this test")
		}}})
	if err != nil {
		t.Fatal(err)
	}
	f.svc.Fetch = fetch
	for _, id := range []string{"https://2130706433/c", "https://0x7f000001/c", "https://127.1/c", "https://2852039166/c",
		"https://[::127.0.0.1]/c", "https://localhost/c"} {
		_, err := f.svc.Client(f.ctx, id)
		if codeOf(err) != InvalidClient || !strings.Contains(err.Error(), "does not fetch from") {
			t.Errorf("%s: %v, want a refused address", id, err)
		}
	}
	if n := looked.Load(); n != 0 {
		t.Errorf("%d DNS lookups, want none", n)
	}
}
