package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/archive"
	"github.com/tollgatehq/tollgate/internal/audit"
	"github.com/tollgatehq/tollgate/internal/store"
)

// archiveCutoff is the first day of the current month: the fixture's
// archive date, with its data in partitions the migrations made.
func archiveCutoff() time.Time {
	now := time.Now().UTC()
	return time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
}

// archiveFixture stores events usage events and events/10 feed events
// before archiveCutoff (and a few usage events after), the feed events each
// with a delivery and an attempt.
func archiveFixture(t *testing.T, db *store.DB, events int) string {
	t.Helper()
	m, _ := merchantKey(t, db)
	for _, s := range []string{
		`INSERT INTO meters (merchant_id, mode, id, key, display_name, aggregation) VALUES ($1, 'test', 'meter_k', 'tokens', 'Tokens', 'sum')`,
		`INSERT INTO meter_events (merchant_id, mode, id, meter_id, customer_id, value, event_timestamp, properties, created_at)
			SELECT $1, 'test', 'mev_' || md5(i::text), 'meter_k', 'cus_' || (i % 50), i % 100,
				$3::timestamptz - (i % 1000 + 1) * interval '1 minute' + CASE WHEN i % 97 = 0 THEN interval '1 day' ELSE interval '0' END,
				jsonb_build_object('model', 'm' || (i % 5)), $3::timestamptz - interval '28 days'
			FROM generate_series(1, $2::int) AS i`,
		`INSERT INTO webhook_endpoints (merchant_id, mode, id, url, secret) VALUES ($1, 'test', 'we_k', 'https://example.com/h', 'whsec_x')`,
		`INSERT INTO events (merchant_id, mode, id, type, data, created_at, occurred_at)
			SELECT $1, 'test', 'evt_' || md5(i::text), 'invoice.paid', jsonb_build_object('n', i), ($3::timestamptz - interval '1 day') + (i % 100) * interval '1 second',
				($3::timestamptz - interval '1 day') + (i % 100) * interval '1 second'
			FROM generate_series(1, $2::int / 10) AS i`,
		`INSERT INTO webhook_deliveries (merchant_id, mode, id, event_id, endpoint_id, status, attempts, created_at)
			SELECT $1, 'test', 'dlv_' || md5(i::text), 'evt_' || md5(i::text), 'we_k', 'succeeded', 1, $3::timestamptz - interval '1 day'
			FROM generate_series(1, $2::int / 10) AS i`,
		`INSERT INTO webhook_attempts (merchant_id, mode, delivery_id, attempt, started_at, status, latency_us, response_body)
			SELECT $1, 'test', 'dlv_' || md5(i::text), 1, $3::timestamptz - interval '1 day', 200, 1500, 'ok'
			FROM generate_series(1, $2::int / 10) AS i`,
	} {
		args := []any{m}
		if strings.Contains(s, "$2") {
			args = append(args, events, archiveCutoff())
		}
		if _, err := db.Exec(s, args...); err != nil {
			t.Fatalf("%v\n%s", err, s)
		}
	}
	return m
}

// `admin archive --json` prints one JSON object, writes an audit entry,
// and verify checks the file, failing with a clear message on a
// truncated or altered copy.
func TestAdminArchiveAndVerify(t *testing.T) {
	t.Parallel()
	db, url := eventsDB(t)
	m := archiveFixture(t, db, 3000)
	dir := t.TempDir()
	out := filepath.Join(dir, "old.jsonl.gz")
	r := cliRun(t, nil, "admin", "archive", "--before", archiveCutoff().Format("2006-01-02"), "--out", out, "--merchant", m, "--json", "--database-url", url)
	if r.code != 0 {
		t.Fatalf("archive: %d %s", r.code, r.stderr)
	}
	var sum archive.Summary
	if err := json.Unmarshal([]byte(r.stdout), &sum); err != nil || sum.Counts[archive.KindMeterEvent] != 3000-30 || sum.Counts[archive.KindEvent] != 300 ||
		sum.Counts[archive.CountDeliveries] != 300 || sum.Counts[archive.CountAttempts] != 300 || len(sum.SHA256) != 64 {
		t.Fatalf("archive --json: %v\n%s", err, r.stdout)
	}
	assertAudited(t, db, m, audit.ArchiveWrite)

	v := cliRun(t, nil, "admin", "archive", "verify", out, "--json")
	var got archive.Summary
	if err := json.Unmarshal([]byte(v.stdout), &got); v.code != 0 || err != nil || got.SHA256 != sum.SHA256 || got.Counts[archive.KindEvent] != 300 {
		t.Fatalf("verify: %d %v %s %s", v.code, err, v.stdout, v.stderr)
	}
	if v := cliRun(t, nil, "admin", "archive", "verify", out); v.code != 0 || !strings.Contains(v.stdout, "Verified "+out+": 2970 usage events and 300 feed events") {
		t.Fatalf("verify: %d %s %s", v.code, v.stdout, v.stderr)
	}

	whole, _ := os.ReadFile(out)
	bad := filepath.Join(dir, "bad.jsonl.gz")
	flipped := bytes.Clone(whole)
	flipped[len(flipped)/3] ^= 1
	for _, tc := range []struct {
		file []byte
		want string
	}{
		{whole[:len(whole)/2], "is truncated"},
		{flipped, "is not a valid archive"},
	} {
		if err := os.WriteFile(bad, tc.file, 0o600); err != nil {
			t.Fatal(err)
		}
		v := cliRun(t, nil, "admin", "archive", "verify", bad, "--json")
		if v.code == 0 || v.stdout != "" || !strings.Contains(v.stderr, tc.want) {
			t.Errorf("verify of a damaged file: exit %d, stdout %q, stderr %q (want %q)", v.code, v.stdout, v.stderr, tc.want)
		}
	}
	for _, args := range [][]string{
		{"--out", out},
		{"--before", "March", "--out", out},
		{"--before", "2025-01-01"},
	} {
		r := cliRun(t, nil, append(append([]string{"admin", "archive"}, args...), "--database-url", url)...)
		if r.code != ExitUsage {
			t.Errorf("%v: exit %d %s", args, r.code, r.stderr)
		}
	}
}

// TestAdminArchiveResumesAfterKill9 kills `tollgate admin archive` (the
// real binary) twice while it writes, runs it again with the same
// arguments each time, and compares the result with an uninterrupted run's
// file: the same bytes.
func TestAdminArchiveResumesAfterKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	t.Parallel()
	db, url := eventsDB(t)
	archiveFixture(t, db, 50_000)
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin", "tollgate")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/tollgatehq/tollgate/cmd/tollgate").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	env := append(os.Environ(), "XDG_CONFIG_HOME="+dir, "XDG_DATA_HOME="+dir)
	run := func(out string) *exec.Cmd {
		c := exec.Command(bin, "admin", "archive", "--before", archiveCutoff().Format("2006-01-02"), "--out", out, "--batch", "100", "--database-url", url)
		c.Env = env
		return c
	}
	want := filepath.Join(dir, "uninterrupted.gz")
	if out, err := run(want).CombinedOutput(); err != nil {
		t.Fatalf("uninterrupted run: %v\n%s", err, out)
	}
	wantBytes, err := os.ReadFile(want)
	if err != nil {
		t.Fatal(err)
	}

	path := filepath.Join(dir, "killed.gz")
	for _, at := range []int{len(wantBytes) / 3, len(wantBytes) * 2 / 3} {
		c := run(path)
		var logs bytes.Buffer
		c.Stdout, c.Stderr = &logs, &logs
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- c.Wait() }()
		deadline := time.Now().Add(2 * time.Minute)
		for {
			if fi, err := os.Stat(path); err == nil && fi.Size() >= int64(at) {
				break
			}
			select {
			case err := <-done:
				t.Fatalf("the run ended (%v) before it wrote %d bytes: nothing was killed\n%s", err, at, logs.String())
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d bytes not written in 2 minutes", at)
			}
			time.Sleep(time.Millisecond)
		}
		if err := c.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err == nil {
			t.Fatalf("the run finished before the kill landed; the test proves nothing\n%s", logs.String())
		}
		fi, _ := os.Stat(path)
		t.Logf("killed with %d of %d bytes written", fi.Size(), len(wantBytes))
		if v := exec.Command(bin, "admin", "archive", "verify", path); v.Run() == nil {
			t.Fatal("verify passed a killed run's file")
		}
	}
	c := run(path)
	var stderr bytes.Buffer
	c.Stderr = &stderr
	if out, err := c.Output(); err != nil {
		t.Fatalf("rerun: %v\n%s\n%s", err, out, stderr.String())
	}
	if !strings.Contains(stderr.String(), "Resumed "+path+" after the ") {
		t.Errorf("the rerun did not resume: %s", stderr.String())
	}
	got, _ := os.ReadFile(path)
	if !bytes.Equal(got, wantBytes) {
		t.Fatalf("the resumed file (%d bytes) differs from the uninterrupted run's (%d bytes)", len(got), len(wantBytes))
	}
	if out, err := exec.Command(bin, "admin", "archive", "verify", path).CombinedOutput(); err != nil {
		t.Fatalf("verify: %v\n%s", err, out)
	}
	var n int
	if err := db.GetContext(context.Background(), &n, `SELECT count(*) FROM meter_events`); err != nil || n != 50_000 {
		t.Fatalf("%d usage events left after archiving (%v): the archive deletes nothing", n, err)
	}
}
