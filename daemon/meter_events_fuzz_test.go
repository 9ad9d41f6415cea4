package daemon

import (
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/metering"
)

// FuzzDecodeMeterEvents feeds arbitrary bodies and headers to the
// meter-events decoder: it must never panic, must fail only with API errors,
// and whatever it accepts must satisfy the schema's invariants.
func FuzzDecodeMeterEvents(f *testing.F) {
	for _, s := range []string{
		`{"event_name":"api_calls","value":1}`,
		`{"event_name":"t","value":"12","customer_id":"cus_1","external_customer_id":"x","timestamp":"2026-07-01T12:00:00Z","idempotency_key":"k","properties":{"a":[1,{"b":null}]}}`,
		`{"events":[{"event_name":"a"},7,{"event_name":"b","value":-1},{"x":1}]}`,
		`{"events":[]}`, `{"events":{}}`, `{"events":null}`, `[]`, `"x"`, `{"value":1e400}`, `{"event_name":"a","value":"18446744073709551616"}`,
		`{"event_name":"a","properties":"x"}`, `{"event_name":"a","timestamp":"2026-02-30T25:00:00Z"}`,
	} {
		f.Add([]byte(s), "")
	}
	f.Add([]byte(`{"event_name":"a"}`), "hdr")
	f.Add([]byte(`{"events":[{"event_name":"a"}]}`), "hdr")
	now := time.Now()
	f.Fuzz(func(t *testing.T, body []byte, header string) {
		req, err := metering.DecodeRequest(body)
		if err == nil {
			err = req.ApplyIdempotencyKey(header)
		}
		ins, errs, batch := req.Events, req.Errs, req.Batch
		if err != nil {
			if _, ok := apperr.As(err); !ok {
				t.Fatalf("non-API error %T %v", err, err)
			}
			return
		}
		if len(ins) != len(errs) || len(ins) == 0 || len(ins) > metering.MaxBatch || (!batch && len(ins) != 1) {
			t.Fatalf("batch=%v with %d inputs, %d errs", batch, len(ins), len(errs))
		}
		for i := range ins {
			if errs[i] != nil {
				if _, ok := apperr.As(errs[i]); !ok {
					t.Fatalf("event %d: non-API error %v", i, errs[i])
				}
				continue
			}
			in := ins[i]
			if in.Value != nil && *in.Value < 0 {
				t.Fatalf("negative value accepted: %d", *in.Value)
			}
			if !batch && header != "" && (in.IdempotencyKey == nil || *in.IdempotencyKey != header) {
				t.Fatalf("header key lost")
			}
			if err := in.Validate(now); err != nil {
				if _, ok := apperr.As(err); !ok {
					t.Fatalf("validate: non-API error %v", err)
				}
				continue
			}
			if in.Timestamp == nil || in.Timestamp.Before(now.Add(-metering.MaxAge-time.Microsecond)) || in.Timestamp.After(now.Add(metering.MaxSkew)) {
				t.Fatalf("timestamp out of window accepted: %v", in.Timestamp)
			}
		}
	})
}
