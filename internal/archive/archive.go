// Package archive writes the usage events and the event feed older than a
// date to a file before retention drops them, and checks such a file.
//
// An archive is gzip-compressed JSON lines: a header line, the usage events
// (ordered by merchant, id and timestamp), the feed events with their
// webhook deliveries and attempts (by merchant, mode, then the time they
// were recorded), then an end line holding the SHA-256 of every line before it and the
// number of records of each kind. Every line carries a `kind`; records keep
// the API's field names and add the merchant (and, for usage events, the
// meter's id).
//
// The file is a series of gzip members, one per batch of records. A run
// that is killed leaves whole members and at most one torn one; the next
// run with the same arguments cuts the torn member off, reads the last
// record to know where it stopped, and writes the same members an
// uninterrupted run would have written, so both files are identical.
package archive

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"time"

	"github.com/tollgatehq/tollgate/internal/wire"
)

// Format is the version of the file layout, written in the header.
const Format = 1

// The kinds of line.
const (
	KindHeader     = "archive"
	KindMeterEvent = "meter_event"
	KindEvent      = "event"
	KindEnd        = "archive_end"
)

// The kinds counted in the end line: the two record kinds and what the
// feed events carry.
const (
	CountDeliveries = "webhook_delivery"
	CountAttempts   = "webhook_attempt"
)

// MaxLine bounds one line of an archive (a feed event carries its data and
// every attempt's response excerpt).
const MaxLine = 16 << 20

// Header is the first line: what the archive holds.
type Header struct {
	Kind       string  `json:"kind"`
	Format     int     `json:"format"`
	Since      *string `json:"since"`
	Before     string  `json:"before"`
	MerchantID *string `json:"merchant_id"`
}

// MeterEventLine is a usage event: the API's meter_event with its merchant
// and meter id.
type MeterEventLine struct {
	Kind       string `json:"kind"`
	MerchantID string `json:"merchant_id"`
	MeterID    string `json:"meter_id"`
	wire.MeterEvent
}

// EventLine is a feed event: the API's event, its merchant, the time it was
// recorded in the feed (the archive's order) and its webhook deliveries.
type EventLine struct {
	Kind       string `json:"kind"`
	MerchantID string `json:"merchant_id"`
	RecordedAt string `json:"recorded_at"`
	wire.Event
	Deliveries []Delivery `json:"deliveries"`
}

// Delivery is one webhook delivery of an event, with every attempt made.
type Delivery struct {
	ID            string    `json:"id"`
	EndpointID    string    `json:"endpoint_id"`
	Status        string    `json:"status"`
	Attempts      int       `json:"attempts"`
	NextAttemptAt string    `json:"next_attempt_at"`
	LastAttemptAt *string   `json:"last_attempt_at"`
	LastStatus    *int      `json:"last_status"`
	LastError     *string   `json:"last_error"`
	CreatedAt     string    `json:"created_at"`
	UpdatedAt     string    `json:"updated_at"`
	History       []Attempt `json:"attempt_history"`
}

// Attempt is one HTTP request of a delivery.
type Attempt struct {
	Attempt      int     `json:"attempt"`
	StartedAt    string  `json:"started_at"`
	Status       *int    `json:"status"`
	LatencyUS    int64   `json:"latency_us"`
	Error        *string `json:"error"`
	ResponseBody string  `json:"response_body"`
}

// End is the last line: the SHA-256 (hex) of every byte before it, once
// uncompressed, and the count of each kind.
type End struct {
	Kind   string           `json:"kind"`
	SHA256 string           `json:"sha256"`
	Counts map[string]int64 `json:"counts"`
}

// Line is one parsed line: Kind and the one field of that kind.
type Line struct {
	Kind       string
	Header     *Header
	MeterEvent *MeterEventLine
	Event      *EventLine
	End        *End
}

var sha256Hex = regexp.MustCompile(`^[0-9a-f]{64}$`)

// ParseLine reads one line (without its newline) strictly: a known kind,
// no unknown fields, and the fields the archive's order and its check rely
// on present and well formed.
func ParseLine(b []byte) (Line, error) {
	var k struct {
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal(b, &k); err != nil {
		return Line{}, fmt.Errorf("not a JSON object: %w", err)
	}
	l := Line{Kind: k.Kind}
	var err error
	switch k.Kind {
	case KindHeader:
		l.Header = &Header{}
		if err = strict(b, l.Header); err == nil {
			err = l.Header.check()
		}
	case KindMeterEvent:
		l.MeterEvent = &MeterEventLine{}
		if err = strict(b, l.MeterEvent); err == nil {
			err = l.MeterEvent.check()
		}
	case KindEvent:
		l.Event = &EventLine{}
		if err = strict(b, l.Event); err == nil {
			err = l.Event.check()
		}
	case KindEnd:
		l.End = &End{}
		if err = strict(b, l.End); err == nil {
			err = l.End.check()
		}
	case "":
		return Line{}, fmt.Errorf("no kind")
	default:
		return Line{}, fmt.Errorf("unknown kind %q", k.Kind)
	}
	if err != nil {
		return Line{}, fmt.Errorf("%s line: %w", k.Kind, err)
	}
	return l, nil
}

func strict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("more than one JSON value")
	}
	return nil
}

// parseTime reads a wire timestamp.
func parseTime(field, s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s: not a timestamp: %q", field, s)
	}
	return t, nil
}

func (h *Header) check() error {
	if h.Format != Format {
		return fmt.Errorf("format %d, this tollgate reads format %d", h.Format, Format)
	}
	before, err := parseTime("before", h.Before)
	if err != nil || h.Since == nil {
		return err
	}
	since, err := parseTime("since", *h.Since)
	if err == nil && !since.Before(before) {
		err = fmt.Errorf("since is not before before")
	}
	return err
}

func (m *MeterEventLine) check() error {
	if m.MerchantID == "" || m.ID == "" || m.MeterID == "" {
		return fmt.Errorf("merchant_id, id and meter_id are required")
	}
	_, err := parseTime("event_timestamp", m.EventTimestamp)
	return err
}

func (e *EventLine) check() error {
	if e.MerchantID == "" || e.ID == "" {
		return fmt.Errorf("merchant_id and id are required")
	}
	if e.Deliveries == nil {
		return fmt.Errorf("deliveries is required (an empty list when there are none)")
	}
	_, err := parseTime("recorded_at", e.RecordedAt)
	return err
}

func (e *End) check() error {
	if !sha256Hex.MatchString(e.SHA256) {
		return fmt.Errorf("sha256 must be 64 lowercase hex digits")
	}
	for _, k := range []string{KindMeterEvent, KindEvent, CountDeliveries, CountAttempts} {
		if n, ok := e.Counts[k]; !ok || n < 0 {
			return fmt.Errorf("counts.%s is required and not negative", k)
		}
	}
	if len(e.Counts) != 4 {
		return fmt.Errorf("counts has unknown kinds")
	}
	return nil
}
