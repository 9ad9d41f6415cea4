package archive

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"os"
	"time"

	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// DefaultBatch is how many records one batch (one gzip member) holds.
const DefaultBatch = 1000

// Options selects what Write archives.
type Options struct {
	// Before: usage events whose timestamp, and feed events recorded, before
	// it; and, unless Since is zero, at Since or after.
	Since, Before time.Time
	// MerchantID "" archives every merchant's.
	MerchantID string
	// Batch is the number of records per batch; 0 is DefaultBatch. A
	// resumed run must use the batch size of the first for the files to be
	// identical.
	Batch int
}

// Summary is what an archive holds, once written or verified.
type Summary struct {
	Path       string           `json:"path"`
	Since      *string          `json:"since"`
	Before     string           `json:"before"`
	MerchantID *string          `json:"merchant_id"`
	Counts     map[string]int64 `json:"counts"`
	SHA256     string           `json:"sha256"`
	Bytes      int64            `json:"bytes"`
	// Resumed counts the records an earlier, interrupted run had written;
	// AlreadyComplete is true when the file was whole before this run.
	Resumed         int64 `json:"resumed_records"`
	AlreadyComplete bool  `json:"already_complete"`
}

// out is the file being written: its running hash and counts.
type out struct {
	f      *os.File
	sum    hash.Hash
	counts map[string]int64
	buf    bytes.Buffer
}

// member writes lines as one gzip member. The gzip header carries no name
// or time, so the same lines always make the same bytes.
func (o *out) member(lines [][]byte) error {
	o.buf.Reset()
	zw, err := gzip.NewWriterLevel(&o.buf, gzip.DefaultCompression)
	if err != nil {
		return err
	}
	for _, l := range lines {
		if _, err := zw.Write(l); err != nil {
			return err
		}
		o.sum.Write(l)
	}
	if err := zw.Close(); err != nil {
		return err
	}
	_, err = o.f.Write(o.buf.Bytes())
	return err
}

func encodeLine(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if len(b)+1 > MaxLine {
		return nil, fmt.Errorf("a record of %d bytes is longer than an archive line may be (%d)", len(b), MaxLine)
	}
	return append(b, '\n'), nil
}

// Write archives, to the file at path, every usage event and feed event
// (with its deliveries) before o.Before, reading q in batches. It deletes
// nothing. When path holds an interrupted archive of the same options, it
// goes on from its last whole batch; a file that is not such an archive is
// refused, never overwritten. progress, if not nil, hears of each batch.
func Write(ctx context.Context, q store.Querier, path string, o Options, progress func(kind string, records int64)) (Summary, error) {
	if o.Batch <= 0 {
		o.Batch = DefaultBatch
	}
	h := Header{Kind: KindHeader, Format: Format, Before: wireTime(o.Before)}
	if !o.Since.IsZero() {
		since := wireTime(o.Since)
		h.Since = &since
	}
	if o.MerchantID != "" {
		h.MerchantID = &o.MerchantID
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return Summary{}, err
	}
	defer f.Close()
	st, err := scan(f)
	if err != nil {
		return Summary{}, fmt.Errorf("%s: %w", path, err)
	}
	if st.header != nil && !sameHeader(*st.header, h) {
		return Summary{}, fmt.Errorf("%s is an archive of other options (since %s, before %s, merchant %s); give another --out", path,
			orAll(st.header.Since), st.header.Before, orAll(st.header.MerchantID))
	}
	sum := Summary{Path: path, Since: h.Since, Before: h.Before, MerchantID: h.MerchantID, Resumed: st.counts[KindMeterEvent] + st.counts[KindEvent]}
	if st.end != nil {
		sum.Counts, sum.SHA256, sum.Bytes, sum.AlreadyComplete = st.end.Counts, st.end.SHA256, st.validEnd, true
		return sum, nil
	}
	if err := f.Truncate(st.validEnd); err != nil {
		return Summary{}, err
	}
	if _, err := f.Seek(st.validEnd, io.SeekStart); err != nil {
		return Summary{}, err
	}
	w := &out{f: f, sum: st.sum, counts: st.counts}
	if st.header == nil {
		l, err := encodeLine(h)
		if err != nil {
			return Summary{}, err
		}
		if err := w.member([][]byte{l}); err != nil {
			return Summary{}, err
		}
	}
	sc := scope{since: o.Since, before: o.Before, merchant: o.MerchantID}
	if st.phase != KindEvent {
		if err := writeMeterEvents(ctx, q, w, sc, st.after, o.Batch, progress); err != nil {
			return Summary{}, err
		}
		st.after = cursor{}
	}
	if err := writeFeedEvents(ctx, q, w, sc, st.after, o.Batch, progress); err != nil {
		return Summary{}, err
	}
	end := End{Kind: KindEnd, SHA256: hex.EncodeToString(w.sum.Sum(nil)), Counts: w.counts}
	l, err := encodeLine(end)
	if err != nil {
		return Summary{}, err
	}
	if err := w.member([][]byte{l}); err != nil {
		return Summary{}, err
	}
	if err := f.Sync(); err != nil {
		return Summary{}, err
	}
	size, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return Summary{}, err
	}
	sum.Counts, sum.SHA256, sum.Bytes = end.Counts, end.SHA256, size
	return sum, f.Close()
}

// writeMeterEvents writes the usage events after `after`, merchant by
// merchant, a member per batch.
func writeMeterEvents(ctx context.Context, q store.Querier, w *out, sc scope, after cursor, batch int, progress func(string, int64)) error {
	var err error
	if after.merchant == "" {
		if after.merchant, err = nextMerchant(ctx, q, sc, ""); err != nil {
			return err
		}
	}
	for after.merchant != "" {
		rows, err := meterEvents(ctx, q, sc, after, batch)
		if err != nil {
			return err
		}
		if len(rows) == 0 {
			m, err := nextMerchant(ctx, q, sc, after.merchant)
			if err != nil {
				return err
			}
			after = cursor{merchant: m}
			continue
		}
		lines := make([][]byte, len(rows))
		for i := range rows {
			if lines[i], err = encodeLine(rows[i]); err != nil {
				return err
			}
		}
		if err := w.member(lines); err != nil {
			return err
		}
		w.counts[KindMeterEvent] += int64(len(rows))
		if after, err = meterEventCursor(&rows[len(rows)-1]); err != nil {
			return err
		}
		if progress != nil {
			progress(KindMeterEvent, w.counts[KindMeterEvent])
		}
	}
	return nil
}

// nextMode is the mode after mode in a merchant's feed: live, then test
// ("" starts, "" ends).
func nextMode(mode string) string {
	switch mode {
	case "":
		return string(tenant.Live)
	case string(tenant.Live):
		return string(tenant.Test)
	}
	return ""
}

// writeFeedEvents writes the feed events after `after`, merchant by
// merchant and mode by mode, a member per batch.
func writeFeedEvents(ctx context.Context, q store.Querier, w *out, sc scope, after cursor, batch int, progress func(string, int64)) error {
	var err error
	if after.merchant == "" {
		if after.merchant, err = nextMerchant(ctx, q, sc, ""); err != nil {
			return err
		}
		after.mode = nextMode("")
	}
	for after.merchant != "" {
		rows, err := feedEvents(ctx, q, sc, after, batch)
		if err != nil {
			return err
		}
		if len(rows) == 0 {
			if mode := nextMode(after.mode); mode != "" {
				after = cursor{merchant: after.merchant, mode: mode}
				continue
			}
			m, err := nextMerchant(ctx, q, sc, after.merchant)
			if err != nil {
				return err
			}
			after = cursor{merchant: m, mode: nextMode("")}
			continue
		}
		lines := make([][]byte, len(rows))
		for i := range rows {
			if lines[i], err = encodeLine(rows[i]); err != nil {
				return err
			}
		}
		if err := w.member(lines); err != nil {
			return err
		}
		for _, r := range rows {
			w.counts[KindEvent]++
			w.counts[CountDeliveries] += int64(len(r.Deliveries))
			for _, d := range r.Deliveries {
				w.counts[CountAttempts] += int64(len(d.History))
			}
		}
		if after, err = eventCursor(&rows[len(rows)-1]); err != nil {
			return err
		}
		if progress != nil {
			progress(KindEvent, w.counts[KindEvent])
		}
	}
	return nil
}

func meterEventCursor(l *MeterEventLine) (cursor, error) {
	t, err := parseTime("event_timestamp", l.EventTimestamp)
	return cursor{merchant: l.MerchantID, id: l.ID, at: t}, err
}

func eventCursor(l *EventLine) (cursor, error) {
	t, err := parseTime("recorded_at", l.RecordedAt)
	mode := tenant.Test
	if l.Livemode {
		mode = tenant.Live
	}
	return cursor{merchant: l.MerchantID, mode: string(mode), id: l.ID, at: t}, err
}

func newCounts() map[string]int64 {
	return map[string]int64{KindMeterEvent: 0, KindEvent: 0, CountDeliveries: 0, CountAttempts: 0}
}

func newSum() hash.Hash { return sha256.New() }

func wireTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000Z") }

func sameHeader(a, b Header) bool {
	return orAll(a.Since) == orAll(b.Since) && a.Before == b.Before && orAll(a.MerchantID) == orAll(b.MerchantID)
}

func orAll(m *string) string {
	if m == nil {
		return "(all)"
	}
	return *m
}
