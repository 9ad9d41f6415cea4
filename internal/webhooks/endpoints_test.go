package webhooks

import (
	"strings"
	"testing"

	"github.com/tollgatehq/tollgate/internal/apperr"
)

func TestValidateURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		url      string
		insecure bool
		ok       bool
	}{
		{"https://hooks.example.com/tollgate", false, true},
		{"https://hooks.example.com:8443/x", false, true},
		{"https://93.184.216.34/x", false, true},
		{"http://hooks.example.com/x", false, false},
		{"https://169.254.169.254/latest/meta-data", false, false},
		{"https://[::1]/x", false, false},
		{"https://[::ffff:10.0.0.1]:443/x", false, false},
		{"https://10.0.0.1/x", false, false},
		{"https://2130706433/x", false, false},
		{"https://0x7f.1/x", false, false},
		{"https://%31%32%37.0.0.1/x", false, false},
		{"https://localhost:8443/x", false, false},
		{"https://hooks.example.com:99999/x", false, false},
		{"https://hooks.example.com:0/x", false, false},
		{"https://user:pw@hooks.example.com/x", false, false},
		{"ftp://hooks.example.com/x", false, false},
		{"/relative", false, false},
		// --allow-insecure-webhooks admits http and those addresses, not
		// broken ports.
		{"http://127.0.0.1:9000/x", true, true},
		{"https://[::1]/x", true, true},
		{"http://127.0.0.1:99999/x", true, false},
	} {
		err := ValidateURL(tc.url, tc.insecure)
		if tc.ok != (err == nil) {
			t.Errorf("%s (insecure %v): %v", tc.url, tc.insecure, err)
			continue
		}
		if e, isAPI := apperr.As(err); err != nil && (!isAPI || e.Code != apperr.InvalidRequest || !strings.HasPrefix(e.Message, "url: ")) {
			t.Errorf("%s: %v", tc.url, err)
		}
	}
}
