package daemon_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/daemon"
)

// Real clients that nobody here wrote, from npm (pinned in
// testdata/interop/package-lock.json), against a running daemon: the MCP
// Inspector's CLI, the TypeScript SDK's 1.x and v2 clients and the MCP
// conformance suite on the tool server, Redocly's
// linter on /openapi.json, and a client generated from /openapi.json by
// openapi-typescript, called through openapi-fetch. Skipped without node
// and the installed packages, unless CI is set (.ci/run installs them).
func TestInteropNodeClients(t *testing.T) {
	t.Parallel()
	dir, err := filepath.Abs("testdata/interop")
	if err != nil {
		t.Fatal(err)
	}
	_, nodeErr := exec.LookPath("node")
	_, modErr := os.Stat(filepath.Join(dir, "node_modules", ".bin", "mcp-inspector-cli"))
	if nodeErr != nil || modErr != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI needs node and the interop packages (npm ci in %s): %v %v", dir, nodeErr, modErr)
		}
		t.Skip("node or the interop packages are missing: run npm ci in daemon/testdata/interop")
	}
	// The v2 SDK's client is identified by the URL of its metadata
	// document, which the daemon fetches over TLS from loopback here.
	ds := newDocServer(t)
	b := setup(t, func(c *daemon.Config) { c.AllowInsecureWebhooks = true; c.WebhookCAFile = ds.caFile })
	_, _, key := b.merchantKey()
	bin := func(name string) string { return filepath.Join(dir, "node_modules", ".bin", name) }
	scripts := filepath.Join(dir, "scripts")

	t.Run("inspector-cli", func(t *testing.T) {
		// Run from scripts/: the CLI looks for its package.json relative to
		// the working directory.
		auth := "Authorization: Bearer " + key
		out := runNode(t, scripts, bin("mcp-inspector-cli"), "--cli", b.url+"/api/mcp", "--transport", "http",
			"--method", "tools/list", "--header", auth)
		var list struct{ Tools []struct{ Name string } }
		decodeFirst(t, out, &list)
		var names []string
		for _, tl := range list.Tools {
			names = append(names, tl.Name)
		}
		if want := slices.Sorted(slices.Values(wantTools)); !slices.Equal(names, want) {
			t.Fatalf("inspector tools/list: %v", names)
		}
		out = runNode(t, scripts, bin("mcp-inspector-cli"), "--cli", b.url+"/api/mcp", "--transport", "http",
			"--method", "tools/call", "--tool-name", "create_meter", "--tool-arg", "key=inspector", "display_name=Inspector", "--header", auth)
		var call struct {
			IsError           bool `json:"isError"`
			StructuredContent struct{ Object, Key string }
		}
		decodeFirst(t, out, &call)
		if call.IsError || call.StructuredContent.Object != "meter" || call.StructuredContent.Key != "inspector" {
			t.Fatalf("inspector tools/call create_meter: %s", out)
		}
	})

	for _, mode := range []string{"key", "oauth"} {
		t.Run("typescript sdk "+mode, func(t *testing.T) {
			out := runNode(t, scripts, "node", "sdk-client.mjs", mode, b.url, key)
			var got struct {
				Tools   []string
				Invoice struct{ Object, Amount, Status string }
				Error   struct {
					Error struct{ Code, Message string }
				}
			}
			decodeFirst(t, out, &got)
			if len(got.Tools) != len(wantTools) || got.Invoice.Object != "invoice" || got.Invoice.Amount != "9000000" ||
				got.Error.Error.Code != "invalid_request" || !strings.HasPrefix(got.Error.Error.Message, "amount: ") {
				t.Fatalf("TypeScript SDK (%s): %s", mode, out)
			}
		})
	}

	const v2Redirect = "http://127.0.0.1:47217/callback"
	clientID := ds.publish("/mcp/ts-sdk-v2.json", map[string]any{
		"client_name": "TS SDK v2 host", "redirect_uris": []string{v2Redirect},
		"grant_types": []string{"authorization_code", "refresh_token"}, "token_endpoint_auth_method": "none",
	})
	for _, mode := range []string{"key", "oauth"} {
		t.Run("typescript sdk v2 "+mode, func(t *testing.T) {
			out := runNode(t, scripts, "node", "client-v2.mjs", mode, b.url, key, clientID)
			var got struct {
				Protocol string
				Tools    []string
				Invoice  struct{ Object, Amount, Status, Description string }
				Error    struct {
					Error struct{ Code, Message string }
				}
			}
			decodeFirst(t, out, &got)
			if got.Protocol != "2026-07-28" {
				t.Errorf("TS SDK v2 (%s) negotiated %q, want 2026-07-28", mode, got.Protocol)
			}
			if !slices.Equal(slices.Sorted(slices.Values(got.Tools)), slices.Sorted(slices.Values(wantTools))) {
				t.Errorf("TS SDK v2 (%s) tools: %v", mode, got.Tools)
			}
			if got.Invoice.Object != "invoice" || got.Invoice.Amount != "9000000" || got.Invoice.Description != "TS SDK v2 ("+mode+")" {
				t.Errorf("TS SDK v2 (%s) create_invoice: %+v", mode, got.Invoice)
			}
			if got.Error.Error.Code != "invalid_request" || !strings.HasPrefix(got.Error.Error.Message, "amount: ") {
				t.Errorf("TS SDK v2 (%s) refused call: %+v", mode, got.Error)
			}
			if mode == "oauth" && ds.fetches("/mcp/ts-sdk-v2.json") == 0 {
				t.Errorf("the daemon never fetched the v2 client's metadata document")
			}
			if t.Failed() {
				t.Logf("output: %s", out)
			}
		})
	}

	t.Run("mcp conformance suite", func(t *testing.T) {
		// The suite has no option for a credential: bearer-preload.mjs adds
		// the key to its requests to the daemon (and to nothing else).
		out := runNodeEnv(t, scripts, []string{"MCP_BEARER=" + key, "MCP_BEARER_ORIGIN=" + b.url},
			"node", "--import", "./bearer-preload.mjs",
			filepath.Join(dir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js"),
			"server", "--url", b.url+"/api/mcp", "--expected-failures", filepath.Join(dir, "conformance-baseline.yaml"))
		// Exit 0 already means no unexpected failure and no stale baseline
		// entry; the scenarios a tool server must pass are checked by name
		// too, so that a baseline listing them could not hide a failure.
		for _, s := range []string{"server-initialize", "ping", "tools-list", "dns-rebinding-protection"} {
			if !regexp.MustCompile(`(?m)^✓ ` + s + `: [1-9][0-9]* passed, 0 failed$`).MatchString(out) {
				t.Errorf("conformance scenario %s did not pass:\n%s", s, out)
			}
		}
	})

	t.Run("redocly lint", func(t *testing.T) {
		out := runNode(t, dir, bin("redocly"), "lint", b.url+"/openapi.json", "--config", filepath.Join(dir, "redocly.yaml"), "--format", "summary")
		if !strings.Contains(out, "Your API description is valid") || strings.Contains(out, "warning ") || strings.Contains(out, "error ") {
			t.Fatalf("redocly lint: %s", out)
		}
	})

	t.Run("openapi-typescript client", func(t *testing.T) {
		outDir := filepath.Join(dir, "out")
		_ = os.RemoveAll(outDir)
		t.Cleanup(func() { os.RemoveAll(outDir) })
		runNode(t, dir, bin("openapi-typescript"), b.url+"/openapi.json", "-o", filepath.Join(outDir, "api.d.ts"))
		runNode(t, dir, bin("tsc"), "-p", filepath.Join(scripts, "tsconfig.json"))
		out := runNode(t, dir, "node", filepath.Join(outDir, "scripts", "openapi-client.js"), b.url, key)
		var got struct {
			Status  int
			Invoice struct{ ID, Amount string }
			Listed  []string
			Refused string
		}
		decodeFirst(t, out, &got)
		if got.Status != 201 || got.Invoice.Amount != "4200000" || !slices.Contains(got.Listed, got.Invoice.ID) || got.Refused != "invalid_request" {
			t.Fatalf("openapi-fetch client: %s", out)
		}
	})
}

// runNode runs a node program in dir, bounded in time, and returns its
// standard output; a failure fails the test with both outputs.
func runNode(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	return runNodeEnv(t, dir, nil, name, args...)
}

// runNodeEnv is runNode with env added to the environment.
func runNodeEnv(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true")
	cmd.Env = append(cmd.Env, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v: %v\nstdout: %s\nstderr: %s", filepath.Base(name), args, err, stdout.String(), stderr.String())
	}
	return stdout.String() + stderr.String()
}

// decodeFirst decodes the first JSON document of out (tools print notices
// around it).
func decodeFirst(t *testing.T, out string, v any) {
	t.Helper()
	if i := strings.Index(out, "{"); i >= 0 && json.NewDecoder(strings.NewReader(out[i:])).Decode(v) == nil {
		return
	}
	t.Fatalf("no JSON document in output: %s", out)
}
