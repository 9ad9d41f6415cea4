package metering

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// decodeSeeds are batch bodies of the common shape and near it: spacing,
// escapes, non-ASCII text, nulls, repeats, unknown fields, numbers and
// properties of every kind the general decoder refuses or reads.
var decodeSeeds = []string{
	`{"events":[{"event_name":"tokens","external_customer_id":"c1","value":5,"timestamp":"2026-11-24T09:00:00.123456789Z","idempotency_key":"k1","properties":{"a":1,"b":[true,null,"x"]}}]}`,
	` { "events" : [ { "event_name" : "tokens" , "customer_id" : "cus_1" , "value" : 0 } , {"event_name":"t2","properties":{}} ] } ` + "\n",
	`{"events":[{"event_name":"tokens","value":"5"}]}`,
	`{"events":[{"event_name":"tokens","value":-5}]}`,
	`{"events":[{"event_name":"tokens","value":05}]}`,
	`{"events":[{"event_name":"tokens","value":5.0}]}`,
	`{"events":[{"event_name":"tokens","value":1e3}]}`,
	`{"events":[{"event_name":"tokens","value":99999999999999999999}]}`,
	`{"events":[{"event_name":"tokens","value":null}]}`,
	`{"events":[{"event_name":"tok\u0065ns"}]}`,
	`{"events":[{"event_name":"tokens","idempotency_key":"k\"1"}]}`,
	`{"events":[{"event_name":"tokens","idempotency_key":"ключ"}]}`,
	`{"events":[{"event_name":"tokens","idempotency_key":""}]}`,
	`{"events":[{"event_name":""}]}`,
	`{"events":[{"event_name":"tokens","event_name":"tokens"}]}`,
	`{"events":[{"event_name":"tokens","colour":"red"}]}`,
	`{"events":[{"event_name":"tokens","timestamp":"yesterday"}]}`,
	`{"events":[{"event_name":"tokens","timestamp":"2026-11-24T09:00:00+25:00"}]}`,
	`{"events":[{"event_name":"tokens","timestamp":"2026-11-24T09:00:00+02:00"}]}`,
	`{"events":[{"event_name":"tokens","properties":{"a":1,"a":2}}]}`,
	`{"events":[{"event_name":"tokens","properties":{"a":"\u0000"}}]}`,
	`{"events":[{"event_name":"tokens","properties":{"a":"\ud800"}}]}`,
	`{"events":[{"event_name":"tokens","properties":{"a":1e999999999999}}]}`,
	`{"events":[{"event_name":"tokens","properties":{"a":}}]}`,
	`{"events":[{"event_name":"tokens","properties":{"a":"}"}}]}`,
	`{"events":[{"event_name":"tokens","properties":[1]}]}`,
	`{"events":[{"event_name":"tokens","properties":"x"}]}`,
	`{"events":[{"event_name":"tokens","properties":{"a":"b\\"}}]}`,
	`{"events":[{"event_name":"tokens","properties":{"a":"b"}`,
	`{"events":[{"event_name":"tokens"}],"extra":1}`,
	`{"events":[{"event_name":"tokens"},]}`,
	`{"events":[]}`,
	`{"events":[7]}`,
	`{"events":[{}]}`,
	`{"events":{"event_name":"tokens"}}`,
	`{"event_name":"tokens","value":5}`,
	`{"events":[{"event_name":"tokens"}]}x`,
	"{\"events\":[{\"event_name\":\"tok\tens\"}]}",
	"\v{\"events\":[{\"event_name\":\"tokens\"}]}",
	`{"events":[{"event_name":"tokens","customer_id":null}]}`,
}

// The fast decoder, where it answers, answers what the general one does.
func TestFastDecodeAgreesWithGeneral(t *testing.T) {
	for _, body := range decodeSeeds {
		sameDecode(t, []byte(body))
	}
	var sb strings.Builder
	sb.WriteString(`{"events":[`)
	for i := range MaxBatch + 1 {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"event_name":"e","value":%d}`, i)
	}
	sb.WriteString(`]}`)
	over := sb.String()
	sameDecode(t, []byte(over))
	if _, ok := decodeBatchFast([]byte(over)); ok {
		t.Errorf("the fast decoder read %d events", MaxBatch+1)
	}
	at := strings.LastIndex(over, `,{"event_name"`)
	full := over[:at] + `]}`
	sameDecode(t, []byte(full))
	if _, ok := decodeBatchFast([]byte(full)); !ok {
		t.Errorf("the fast decoder gave up on %d plain events", MaxBatch)
	}
	if _, ok := decodeBatchFast([]byte(decodeSeeds[0])); !ok {
		t.Errorf("the fast decoder gave up on %s", decodeSeeds[0])
	}
}

func FuzzFastDecode(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) { sameDecode(t, body) })
}

func sameDecode(t *testing.T, body []byte) {
	t.Helper()
	fast, ok := decodeBatchFast(body)
	if !ok {
		return
	}
	general, err := decodeGeneral(body)
	if err != nil || !reflect.DeepEqual(fast, general) {
		t.Errorf("%s:\nfast    %+v\ngeneral %+v, %v", body, fast, general, err)
	}
}
