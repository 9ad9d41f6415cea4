package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// opensslSign signs payload at t with secret using openssl, an
// implementation independent of ours, and returns the header value.
func opensslSign(t *testing.T, payload []byte, ts int64, secret string) string {
	t.Helper()
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("openssl not installed")
	}
	cmd := exec.Command("openssl", "dgst", "-sha256", "-hmac", secret, "-r")
	cmd.Stdin = bytes.NewReader(append([]byte(strconv.FormatInt(ts, 10)+"."), payload...))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("openssl: %v", err)
	}
	hexSig, _, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
	return "t=" + strconv.FormatInt(ts, 10) + ",v1=" + hexSig
}

func writePayload(t *testing.T, payload []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "body.json")
	if err := os.WriteFile(path, payload, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestWebhookVerifyAgainstOpenSSL(t *testing.T) {
	t.Parallel()
	const secret = "whsec_test_5WbX5kEWLlfzsGNjH64I8lOOqUB6e8FH"
	const ts = 1782907200
	payload := []byte(`{"id":"evt_1","object":"event","type":"invoice.paid","created_at":"2026-07-01T12:00:00.000000Z","data":{"id":"inv_1","amount":"9000000"},"livemode":false}`)
	header := opensslSign(t, payload, ts, secret)
	file := writePayload(t, payload)
	tampered := writePayload(t, bytes.Replace(payload, []byte("9000000"), []byte("9000001"), 1))
	now := func(d int) string { return strconv.Itoa(ts + d) }

	tests := []struct {
		name   string
		args   []string
		code   int
		output string // in stdout (exit 0) or stderr
	}{
		{"valid", []string{"--header", header, "--now", now(30), file}, ExitOK, "valid"},
		{"header with its name", []string{"--header", "x-wc-signature: " + header, "--now", now(0), file}, ExitOK, "valid"},
		{"rotation: any v1 matches", []string{"--header", header + ",v1=" + strings.Repeat("ab", 32), "--now", now(0), file}, ExitOK, "valid"},
		{"tampered body", []string{"--header", header, "--now", now(0), tampered}, ExitInvalid, "signature mismatch"},
		{"wrong secret", []string{"--header", opensslSign(t, payload, ts, "whsec_other"), "--now", now(0), file}, ExitInvalid, "signature mismatch"},
		{"too old", []string{"--header", header, "--now", now(400), file}, ExitInvalid, "6m40s too old (tolerance 5m0s)"},
		{"in the future", []string{"--header", header, "--now", now(-301), file}, ExitInvalid, "5m1s in the future"},
		{"wider tolerance", []string{"--header", header, "--now", now(400), "--tolerance", "10m", file}, ExitOK, "valid"},
		{"no time check", []string{"--header", header, "--now", now(99999), "--tolerance", "0", file}, ExitOK, "valid"},
		{"no signature", []string{"--header", "t=" + now(0), "--now", now(0), file}, ExitInvalid, "no v1 signature"},
		{"empty header", []string{"--header", "", file}, ExitInvalid, "no v1 signature"},
		{"malformed", []string{"--header", "t=yesterday,v1=" + strings.Repeat("ab", 32), file}, ExitInvalid, "malformed signature header"},
		{"short v1", []string{"--header", "t=1,v1=abc", file}, ExitInvalid, "malformed signature header"},
		{"no secret", []string{"--header", header, file}, ExitUsage, "--secret"},
		{"bad --now", []string{"--header", header, "--now", "soon", file}, ExitUsage, "--now"},
		{"missing file", []string{"--header", header, "/nonexistent/body.json"}, ExitUsage, "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			args := append([]string{"webhook", "verify"}, tt.args...)
			if tt.name != "no secret" {
				args = append(args, "--secret", secret)
			}
			res := cliRun(t, nil, args...)
			out := res.stdout
			if tt.code != ExitOK {
				out = res.stderr
			}
			if res.code != tt.code || !strings.Contains(out, tt.output) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d with %q", res.code, res.stdout, res.stderr, tt.code, tt.output)
			}
		})
	}
}

func TestWebhookVerifyStdinAndJSON(t *testing.T) {
	t.Parallel()
	payload := []byte(`{"id":"evt_2"}` + "\n")
	header := opensslSign(t, payload, 1782907200, "whsec_x")
	for _, tt := range []struct {
		now   string
		code  int
		valid bool
	}{{"1782907200", ExitOK, true}, {"1782908200", ExitInvalid, false}} {
		var out, errOut bytes.Buffer
		streams := &IO{In: bytes.NewReader(payload), Out: &out, Err: &errOut}
		code := Run(context.Background(), []string{"webhook", "verify", "--secret", "whsec_x", "--header", header, "--now", tt.now, "--json", "-",
			"--config", writePayload(t, nil)}, streams)
		var got struct {
			Valid  bool   `json:"valid"`
			Reason string `json:"reason"`
		}
		if err := json.Unmarshal(out.Bytes(), &got); err != nil || code != tt.code || got.Valid != tt.valid || errOut.Len() != 0 {
			t.Errorf("now %s: exit %d, stdout %q, stderr %q", tt.now, code, out.String(), errOut.String())
		}
		if !tt.valid && !strings.Contains(got.Reason, "too old") {
			t.Errorf("reason %q", got.Reason)
		}
	}
}

func TestWebhookSignMatchesOpenSSL(t *testing.T) {
	t.Parallel()
	payload := []byte(`{"id":"evt_3","type":"credit.granted"}`)
	file := writePayload(t, payload)
	res := cliRun(t, nil, "webhook", "sign", "--secret", "whsec_a", "--timestamp", "1782907200", file)
	if want := opensslSign(t, payload, 1782907200, "whsec_a"); res.code != 0 || res.stdout != want+"\n" {
		t.Fatalf("exit %d, got %q, want %q", res.code, res.stdout, want)
	}
	// Two secrets give two signatures, each verifiable alone.
	res = cliRun(t, nil, "webhook", "sign", "--secret", "whsec_new", "--secret", "whsec_old", file)
	header := strings.TrimSpace(res.stdout)
	if strings.Count(header, "v1=") != 2 {
		t.Fatalf("header %q", header)
	}
	for _, secret := range []string{"whsec_new", "whsec_old"} {
		if v := cliRun(t, nil, "webhook", "verify", "--secret", secret, "--header", header, file); v.code != 0 {
			t.Errorf("verify with %s: exit %d %s", secret, v.code, v.stderr)
		}
	}
	if res := cliRun(t, nil, "webhook", "sign", file); res.code != ExitUsage {
		t.Errorf("sign without --secret: exit %d", res.code)
	}
}

func TestEventsTailFlags(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--since", "2h", "--after", "evt_1"},
		{"--after", "inv_1"},
		{"--forward-to", "http://localhost:3000"},
		{"--forward-to", "localhost:3000", "--secret", "whsec_x"},
		{"--since", "-1h"},
		{"--interval", "0s"},
	} {
		res := cliRun(t, nil, append([]string{"events", "tail", "--api-key", testKey, "--api-url", "http://127.0.0.1:1"}, args...)...)
		if res.code != ExitUsage {
			t.Errorf("%v: exit %d, stderr %q; want a usage error", args, res.code, res.stderr)
		}
	}
}
