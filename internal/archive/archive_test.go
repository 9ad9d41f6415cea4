package archive

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// monthStart is the first day of the current month: the fixtures' archive
// date, with data on both sides in partitions the migrations made (the
// feed's start a month back).
func monthStart() time.Time {
	now := time.Now().UTC()
	return time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
}

func ts(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000Z") }

// fixture stores two merchants' usage events (671 and 150 before cutoff,
// 29 after), feed events (the first merchant's with deliveries and
// attempts) and returns the database.
func fixture(t *testing.T, cutoff time.Time) *store.DB {
	t.Helper()
	db := testdb.Open(t)
	for _, s := range []string{
		`INSERT INTO merchants (id, name) VALUES ('mer_a', 'a'), ('mer_b', 'b')`,
		`INSERT INTO meters (merchant_id, mode, id, key, display_name, aggregation) VALUES
			('mer_a', 'test', 'meter_a', 'tokens', 'Tokens', 'sum'), ('mer_b', 'live', 'meter_b', 'calls', 'Calls', 'count')`,
		`INSERT INTO meter_events (merchant_id, mode, id, meter_id, customer_id, value, event_timestamp, properties, idempotency_key, created_at)
			SELECT 'mer_a', 'test', 'mev_a' || lpad(i::text, 5, '0'), 'meter_a', 'cus_' || (i % 7), i,
				($1::timestamptz - interval '28 days') + i * interval '1 hour', CASE WHEN i % 3 = 0 THEN '{"model":"big <&>"}'::jsonb END,
				CASE WHEN i % 2 = 0 THEN 'key-' || i END, ($1::timestamptz - interval '28 days') + i * interval '1 hour' + interval '1 second'
			FROM generate_series(1, 700) AS i`,
		`INSERT INTO meter_events (merchant_id, mode, id, meter_id, customer_id, value, event_timestamp, created_at, cancelled_at)
			SELECT 'mer_b', 'live', 'mev_b' || lpad(i::text, 5, '0'), 'meter_b', NULL, 1,
				($1::timestamptz - interval '9 days') + i * interval '1 minute', $1::timestamptz - interval '9 days', CASE WHEN i = 7 THEN ($1::timestamptz - interval '8 days') END
			FROM generate_series(1, 150) AS i`,
		`INSERT INTO webhook_endpoints (merchant_id, mode, id, url, secret) VALUES ('mer_a', 'test', 'we_a', 'https://example.com/h', 'whsec_x')`,
		`INSERT INTO events (merchant_id, mode, id, type, data, created_at, occurred_at)
			SELECT m, 'test', 'evt_' || m || lpad(i::text, 4, '0'), 'invoice.created', jsonb_build_object('object', 'invoice', 'n', i),
				($1::timestamptz - interval '2 days') + i * interval '1 minute', ($1::timestamptz - interval '2 days') + i * interval '1 minute'
			FROM generate_series(1, 4000) AS i, (VALUES ('mer_a'), ('mer_b')) AS ms (m)`,
		`INSERT INTO webhook_deliveries (merchant_id, mode, id, event_id, endpoint_id, status, attempts, last_attempt_at, last_status, created_at)
			SELECT 'mer_a', 'test', 'dlv_' || i, 'evt_mer_a' || lpad(i::text, 4, '0'), 'we_a', 'succeeded', 2, $1::timestamptz - interval '1 day', 200, $1::timestamptz - interval '2 days'
			FROM generate_series(1, 4000, 5) AS i`,
		`INSERT INTO webhook_attempts (merchant_id, mode, delivery_id, attempt, started_at, status, latency_us, error, response_body)
			SELECT 'mer_a', 'test', 'dlv_' || i, a, $1::timestamptz - interval '1 day', CASE WHEN a = 1 THEN 500 ELSE 200 END, 1000 * a,
				CASE WHEN a = 1 THEN 'server error' END, 'ok'
			FROM generate_series(1, 4000, 5) AS i, generate_series(1, 2) AS a`,
	} {
		var args []any
		if strings.Contains(s, "$1") {
			args = append(args, cutoff)
		}
		if _, err := db.Exec(s, args...); err != nil {
			t.Fatalf("%v\n%s", err, s)
		}
	}
	return db
}

// lines decompresses an archive into its lines.
func lines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, MaxLine)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestArchiveWritesWhatIsOlderAndDeletesNothing(t *testing.T) {
	t.Parallel()
	cutoff := monthStart()
	db := fixture(t, cutoff)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "a.jsonl.gz")
	sum, err := Write(ctx, db, path, Options{Before: cutoff, Batch: 100}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// mer_a: events 1..671 fall before March 1st (Feb 1 + 672 h), and feed
	// events 1..2879 (Feb 27 + 2880 min); every one of mer_b's 150.
	want := map[string]int64{KindMeterEvent: 671 + 150, KindEvent: 2 * 2879, CountDeliveries: 576, CountAttempts: 1152}
	for k, n := range want {
		if sum.Counts[k] != n {
			t.Errorf("%s: %d records, want %d", k, sum.Counts[k], n)
		}
	}
	ls := lines(t, path)
	if int64(len(ls)) != 2+want[KindMeterEvent]+want[KindEvent] {
		t.Fatalf("%d lines", len(ls))
	}
	for i, want := range map[int]string{
		0:   `{"kind":"archive","format":1,"since":null,"before":"` + ts(cutoff) + `","merchant_id":null}`,
		3:   `{"kind":"meter_event","merchant_id":"mer_a","meter_id":"meter_a","object":"meter_event","id":"mev_a00003","meter":"tokens","customer_id":"cus_3","value":"3","event_timestamp":"` + ts(cutoff.Add(-28*24*time.Hour+3*time.Hour)) + `","idempotency_key":null,"properties":{"model":"big \u003c\u0026\u003e"},"created_at":"` + ts(cutoff.Add(-28*24*time.Hour+3*time.Hour+time.Second)) + `","livemode":false,"deduplicated":false}`,
		672: `{"kind":"meter_event","merchant_id":"mer_b","meter_id":"meter_b","object":"meter_event","id":"mev_b00001","meter":"calls","customer_id":null,"value":"1","event_timestamp":"` + ts(cutoff.Add(-9*24*time.Hour+time.Minute)) + `","idempotency_key":null,"created_at":"` + ts(cutoff.Add(-9*24*time.Hour)) + `","livemode":true,"deduplicated":false}`,
	} {
		if ls[i] != want {
			t.Errorf("line %d:\n%s\nwant\n%s", i, ls[i], want)
		}
	}
	if !strings.Contains(ls[len(ls)-2], `"kind":"event"`) || !strings.HasPrefix(ls[len(ls)-1], `{"kind":"archive_end","sha256":"`+sum.SHA256) {
		t.Errorf("last lines:\n%s\n%s", ls[len(ls)-2], ls[len(ls)-1])
	}
	first := ls[1+want[KindMeterEvent]]
	if !strings.HasPrefix(first, `{"kind":"event","merchant_id":"mer_a","recorded_at":"`+ts(cutoff.Add(-2*24*time.Hour+time.Minute))+`","object":"event","id":"evt_mer_a0001"`) ||
		!strings.Contains(first, `"deliveries":[{"id":"dlv_1","endpoint_id":"we_a","status":"succeeded","attempts":2,`) ||
		!strings.Contains(first, `"attempt_history":[{"attempt":1,"started_at":"`+ts(cutoff.Add(-24*time.Hour))+`","status":500,"latency_us":1000,"error":"server error","response_body":"ok"},{"attempt":2,`) {
		t.Errorf("first feed event:\n%s", first)
	}
	got, err := Verify(path)
	if err != nil || got.SHA256 != sum.SHA256 || got.Bytes != sum.Bytes || got.Counts[KindEvent] != want[KindEvent] {
		t.Fatalf("verify: %+v %v (wrote %+v)", got, err, sum)
	}
	var stored [2]int
	if err := db.Get(&stored[0], `SELECT count(*) FROM meter_events`); err != nil {
		t.Fatal(err)
	}
	if err := db.Get(&stored[1], `SELECT count(*) FROM events`); err != nil {
		t.Fatal(err)
	}
	if stored != [2]int{850, 8000} {
		t.Errorf("the archive deleted rows: %v remain", stored)
	}

	// One merchant's archive holds only its records.
	one := filepath.Join(t.TempDir(), "b.jsonl.gz")
	sb, err := Write(ctx, db, one, Options{Before: cutoff, MerchantID: "mer_b"}, nil)
	if err != nil || sb.Counts[KindMeterEvent] != 150 || sb.Counts[KindEvent] != 2879 || sb.Counts[CountDeliveries] != 0 {
		t.Fatalf("mer_b: %+v %v", sb, err)
	}
	for _, l := range lines(t, one)[1:] {
		if strings.Contains(l, "mer_a") {
			t.Fatalf("mer_b's archive holds %s", l)
		}
	}
	// --since bounds it from below.
	part := filepath.Join(t.TempDir(), "part.jsonl.gz")
	sp, err := Write(ctx, db, part, Options{Since: cutoff.Add(-9*24*time.Hour + 30*time.Minute), Before: cutoff, MerchantID: "mer_b"}, nil)
	if err != nil || sp.Counts[KindMeterEvent] != 121 || sp.Counts[KindEvent] != 2879 || *sp.Since != ts(cutoff.Add(-9*24*time.Hour+30*time.Minute)) {
		t.Fatalf("since: %+v %v", sp, err)
	}
	// Running it again on the whole file changes nothing.
	again, err := Write(ctx, db, one, Options{Before: cutoff, MerchantID: "mer_b"}, nil)
	if err != nil || !again.AlreadyComplete || again.SHA256 != sb.SHA256 {
		t.Fatalf("again: %+v %v", again, err)
	}
	if _, err := Write(ctx, db, one, Options{Before: cutoff}, nil); err == nil || !strings.Contains(err.Error(), "other options") {
		t.Fatalf("another merchant's options on an existing archive: %v", err)
	}
	notOurs := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(notOurs, []byte("precious"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(ctx, db, notOurs, Options{Before: cutoff}, nil); err == nil {
		t.Fatal("overwrote a file that is not an archive")
	}
	if b, _ := os.ReadFile(notOurs); string(b) != "precious" {
		t.Fatalf("the file became %q", b)
	}
}

// An archive cut anywhere (as a killed run leaves it) and written again
// with the same options ends byte for byte like an uninterrupted run.
func TestArchiveResumesToTheSameFile(t *testing.T) {
	t.Parallel()
	cutoff := monthStart()
	db := fixture(t, cutoff)
	ctx := context.Background()
	dir := t.TempDir()
	whole := filepath.Join(dir, "whole.gz")
	o := Options{Before: cutoff, Batch: 250}
	sum, err := Write(ctx, db, whole, o, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(whole)
	if err != nil {
		t.Fatal(err)
	}
	cuts := []int{1, 9, 10, 11, len(want) - 1, len(want) - 20}
	for i := 1; i < 16; i++ {
		cuts = append(cuts, len(want)*i/16)
	}
	for _, cut := range cuts {
		path := filepath.Join(dir, "cut.gz")
		if err := os.WriteFile(path, want[:cut], 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := Verify(path); err == nil {
			t.Errorf("cut at %d: verify passed", cut)
		}
		got, err := Write(ctx, db, path, o, nil)
		if err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		b, _ := os.ReadFile(path)
		if !bytes.Equal(b, want) || got.SHA256 != sum.SHA256 {
			t.Fatalf("cut at %d: resumed after %d records into %d bytes, want %d bytes", cut, got.Resumed, len(b), len(want))
		}
	}
}

// verify names what is wrong with a truncated, altered or incomplete file.
func TestVerifyRefusesDamagedArchives(t *testing.T) {
	t.Parallel()
	cutoff := monthStart()
	db := fixture(t, cutoff)
	dir := t.TempDir()
	path := filepath.Join(dir, "a.gz")
	if _, err := Write(context.Background(), db, path, Options{Before: cutoff, Batch: 500}, nil); err != nil {
		t.Fatal(err)
	}
	good, _ := os.ReadFile(path)
	text := strings.Join(lines(t, path), "\n") + "\n"
	regzip := func(s string) []byte {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		_, _ = zw.Write([]byte(s))
		_ = zw.Close()
		return b.Bytes()
	}
	flipped := bytes.Clone(good)
	flipped[len(good)/2] ^= 0x40
	endAt := strings.LastIndex(text, `{"kind":"archive_end"`)
	for _, tc := range []struct {
		name string
		file []byte
		want string
	}{
		{"truncated", good[:len(good)*2/3], "is truncated"},
		{"a byte flipped", flipped, "not a valid archive"},
		{"a value changed", regzip(strings.Replace(text, `"value":"3"`, `"value":"4"`, 1)), "SHA-256"},
		{"a line dropped", regzip(strings.Replace(text, text[strings.Index(text, `{"kind":"meter_event"`):strings.Index(text, "\n")+1+strings.Index(text[strings.Index(text, "\n")+1:], "\n")+1], "", 1)), "SHA-256"},
		{"not JSON", regzip(strings.Replace(text, `"kind":"meter_event"`, `"kind":meter_event`, 1)), "not a JSON object"},
		{"no end line", regzip(text[:endAt]), "is incomplete"},
		{"not gzip", []byte(text), "not a gzip file"},
		{"empty", nil, "is empty"},
	} {
		p := filepath.Join(dir, "bad.gz")
		if err := os.WriteFile(p, tc.file, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := Verify(p); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
}

// FuzzParseLine feeds verify's line parser arbitrary lines: it never
// panics, and a line it accepts keeps its kind and key through a re-encoding.
func FuzzParseLine(f *testing.F) {
	for _, s := range []string{
		`{"kind":"archive","format":1,"before":"2025-03-01T00:00:00.000000Z","merchant_id":null}`,
		`{"kind":"meter_event","merchant_id":"mer_a","meter_id":"meter_a","object":"meter_event","id":"mev_1","meter":"tokens","customer_id":"cus_3","value":"3","event_timestamp":"2025-02-01T03:00:00.000000Z","idempotency_key":null,"properties":{"a":1},"created_at":"2025-02-01T03:00:01.000000Z","livemode":false,"deduplicated":false}`,
		`{"kind":"event","merchant_id":"mer_a","recorded_at":"2025-02-27T00:01:00.000000Z","object":"event","id":"evt_1","type":"invoice.created","created_at":"2025-02-27T00:01:00.000000Z","data":{"n":1},"livemode":false,"deliveries":[{"id":"dlv_1","endpoint_id":"we_a","status":"succeeded","attempts":1,"next_attempt_at":"2025-02-27T00:01:00.000000Z","last_attempt_at":null,"last_status":200,"last_error":null,"created_at":"2025-02-27T00:01:00.000000Z","updated_at":"2025-02-27T00:01:00.000000Z","attempt_history":[]}]}`,
		`{"kind":"archive_end","sha256":"` + strings.Repeat("ab", 32) + `","counts":{"meter_event":1,"event":1,"webhook_delivery":1,"webhook_attempt":0}}`,
		`{"kind":"event"}`, `{}`, `[]`, `{"kind":"archive","format":2}`, `{"kind":"archive_end","counts":{"event":-1}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := ParseLine(b)
		if err != nil {
			return
		}
		var v any
		switch l.Kind {
		case KindHeader:
			v = l.Header
		case KindMeterEvent:
			v = l.MeterEvent
		case KindEvent:
			v = l.Event
		case KindEnd:
			v = l.End
		default:
			t.Fatalf("accepted kind %q", l.Kind)
		}
		again, err := encodeLine(v)
		if err != nil {
			t.Fatalf("re-encoding %s: %v", b, err)
		}
		l2, err := ParseLine(again[:len(again)-1])
		if err != nil || l2.Kind != l.Kind {
			t.Fatalf("%s re-encoded as %s: %v", b, again, err)
		}
	})
}
