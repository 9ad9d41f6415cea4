package metering

import (
	"encoding/json"
	"time"

	"github.com/tollgatehq/tollgate/internal/fields"
)

// Decoding a batch the general way (fields.Decode, an Object per event)
// was about a third of the daemon's CPU on ingestion: the body is walked
// three times and every event costs two maps and some thirty allocations.
// decodeBatchFast reads the common shape in one pass instead: {"events":
// [...]} whose events have only known fields, no repeats, strings of
// printable ASCII without escapes, a value of plain digits, a timestamp
// that parses and properties that are a JSON object. On anything else it
// gives up (ok false) and DecodeRequest decodes the body the general way,
// which alone says what is wrong, so what a body decodes to, and every
// error, stay as they were; a test holds the two to the same result.

// The fields of an event, as bits, to find a field given twice.
const (
	fEventName = 1 << iota
	fCustomerID
	fExternalCustomerID
	fTimestamp
	fIdempotencyKey
	fProperties
	fValue
)

// batchParser walks a body; src is the body as one string, whose
// substrings become the events' strings (and the keys of properties)
// without a copy each.
type batchParser struct {
	b    []byte
	src  string
	i    int
	keys []string // the keys of the objects being read (see value)
	// The events' optional fields point into these, one allocation each
	// a batch instead of one a field (~2,000 a 500-event batch).
	strs   []string
	times  []time.Time
	values []int64
	// The last timestamp read and what it parsed to: a batch's events
	// mostly share their timestamp, which is parsed once.
	stamp  string
	parsed time.Time
}

func (p *batchParser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\r', '\n':
			p.i++
		default:
			return
		}
	}
}

// eat moves past c, after whitespace, and reports whether it was there.
func (p *batchParser) eat(c byte) bool {
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// plain reads a non-empty string of printable ASCII without escapes.
func (p *batchParser) plain() (string, bool) {
	if !p.eat('"') {
		return "", false
	}
	start := p.i
	for p.i < len(p.b) {
		c := p.b[p.i]
		if c == '"' {
			s := p.src[start:p.i]
			p.i++
			return s, len(s) > 0
		}
		if c < 0x20 || c > 0x7e || c == '\\' {
			return "", false
		}
		p.i++
	}
	return "", false
}

// digits reads a JSON integer of 1 to 18 digits, not negative.
func (p *batchParser) digits() ([]byte, bool) {
	p.ws()
	start := p.i
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		p.i++
	}
	n := p.i - start
	if n == 0 || n > 18 || (n > 1 && p.b[start] == '0') {
		return nil, false
	}
	return p.b[start:p.i], true
}

// object reads a JSON object, valid and storable as jsonb as
// fields.Object.Raw requires, in the common shape (see value).
func (p *batchParser) object() (json.RawMessage, bool) {
	p.ws()
	start := p.i
	if start >= len(p.b) || p.b[start] != '{' {
		return nil, false
	}
	keys, ok := p.value(p.keys[:0], 0)
	p.keys = keys
	return json.RawMessage(p.b[start:p.i]), ok
}

// decodeBatchFast decodes body as DecodeRequest would when it has the
// common shape (see above); ok is false otherwise.
func decodeBatchFast(body []byte) (req Request, ok bool) {
	p := batchParser{b: body}
	if !p.eat('{') || !p.eat('"') || len(p.b)-p.i < 8 || string(p.b[p.i:p.i+7]) != `events"` {
		return Request{}, false
	}
	p.i += 7
	if !p.eat(':') || !p.eat('[') {
		return Request{}, false
	}
	p.src = string(body)
	// An event takes 60 bytes at least.
	n := min(MaxBatch, len(body)/60+1)
	events := make([]EventInput, 0, n)
	p.strs, p.times, p.values = make([]string, 0, 3*n), make([]time.Time, 0, n), make([]int64, 0, n)
	for {
		if len(events) == MaxBatch {
			return Request{}, false
		}
		in, ok := p.event()
		if !ok {
			return Request{}, false
		}
		events = append(events, in)
		if p.eat(']') {
			break
		}
		if !p.eat(',') {
			return Request{}, false
		}
	}
	if !p.eat('}') {
		return Request{}, false
	}
	if p.ws(); p.i != len(p.b) {
		return Request{}, false
	}
	return Request{Batch: true, Events: events, Errs: make([]error, len(events))}, true
}

// event reads one event of the common shape.
func (p *batchParser) event() (EventInput, bool) {
	var in EventInput
	if !p.eat('{') {
		return in, false
	}
	var seen int
	for {
		key, ok := p.plain()
		if !ok || !p.eat(':') {
			return in, false
		}
		var bit int
		switch key {
		case "event_name":
			bit = fEventName
			in.EventName, ok = p.plain()
		case "customer_id":
			bit = fCustomerID
			in.CustomerID, ok = p.str()
		case "external_customer_id":
			bit = fExternalCustomerID
			in.ExternalCustomerID, ok = p.str()
		case "idempotency_key":
			bit = fIdempotencyKey
			in.IdempotencyKey, ok = p.str()
		case "timestamp":
			bit = fTimestamp
			var s string
			if s, ok = p.plain(); ok && s != p.stamp {
				var err error
				p.parsed, err = fields.ParseTime("timestamp", s)
				p.stamp, ok = s, err == nil
				if !ok {
					p.stamp = ""
				}
			}
			if ok {
				p.times = append(p.times, p.parsed)
				in.Timestamp = &p.times[len(p.times)-1]
			}
		case "properties":
			bit = fProperties
			in.Properties, ok = p.object()
		case "value":
			bit = fValue
			var raw []byte
			if raw, ok = p.digits(); ok {
				v, err := ParseValue("value", raw)
				p.values = append(p.values, v)
				in.Value, ok = &p.values[len(p.values)-1], err == nil
			}
		default:
			return in, false
		}
		if !ok || seen&bit != 0 {
			return in, false
		}
		seen |= bit
		if p.eat('}') {
			return in, seen&fEventName != 0
		}
		if !p.eat(',') {
			return in, false
		}
	}
}

// str is plain as an optional field's value.
func (p *batchParser) str() (*string, bool) {
	s, ok := p.plain()
	p.strs = append(p.strs, s)
	return &p.strs[len(p.strs)-1], ok
}
