package events

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/lib/pq"

	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// The local hand-off. A statement that writes events and their deliveries
// (DeliveriesLeased) may insert some deliveries already leased to this
// process, their first attempt numbered, exactly as a claim would lease
// them, and return what sending them needs; once its transaction commits,
// the deliverer here sends them at once, with no claim: no read of the due
// queue and no second write of each delivery. It leases only what the
// deliverer reserved room for before the statement ran (Handoff.Reserve),
// so a handed-off attempt starts as soon as the commit returns, well
// within its lease. A rollback hands nothing off and gives the room back.
// A replica that dies after the commit leaves its leases to expire, like
// a claimer dying mid-attempt: the next claim records the attempt as
// interrupted and makes the next one.

// HandoffName is the name the deliverer provides itself under
// (store.DB.Provide).
const HandoffName = "events.handoff"

// Handoff is the local deliverer, as the emitting statements see it.
type Handoff interface {
	// Reserve takes room for at most most first attempts of the merchant's
	// deliveries, shared out among its endpoints: how many each may be
	// handed (none for an endpoint not named), and the lease to take.
	Reserve(merchantID string, most int) Reservation
	// Start sends the deliveries leased under r, once their transaction
	// has committed, and gives back the room they did not use.
	Start(r Reservation, leased []Leased)
	// Release gives back the room of a reservation whose transaction
	// rolled back.
	Release(r Reservation)
}

// Reservation is room for handed-off attempts, by endpoint.
type Reservation struct {
	Endpoints []string
	Room      []int64
	Lease     time.Duration
	At        time.Time // when it was made: before the leases began
}

// Empty reports whether r holds no room.
func (r Reservation) Empty() bool { return len(r.Endpoints) == 0 }

// Leased is a delivery inserted leased to this process, its first attempt
// numbered, with what sending it needs.
type Leased struct {
	MerchantID string      `json:"merchant_id"`
	Mode       tenant.Mode `json:"mode"`
	ID         string      `json:"id"`
	EndpointID string      `json:"endpoint_id"`
	URL        string      `json:"url"`
	// Secrets sign the attempt: the endpoint's secret, then the previous
	// one while a rotation's overlap lasts.
	Secrets []string `json:"secrets"`
	Event   struct {
		ID         string          `json:"id"`
		Seq        int64           `json:"seq"`
		Type       string          `json:"type"`
		Data       json.RawMessage `json:"data"`
		CreatedAt  time.Time       `json:"created_at"`
		OccurredAt time.Time       `json:"occurred_at"`
	} `json:"event"`
}

// Lease is one statement's hand-off: the room reserved before it runs and
// the leased deliveries it returned, started or given back when its
// transaction ends.
type Lease struct {
	h      Handoff
	r      Reservation
	leased []Leased
}

// NewLease reserves room for the first attempts of up to most deliveries
// of merchantID that a statement of tx is about to insert, when this
// process has a deliverer, and starts them (or gives the room back) when
// tx ends. It never fails: without room, the statement leases nothing and
// its deliveries are claimed as usual.
func NewLease(tx *store.Tx, merchantID string, most int) *Lease {
	l := &Lease{}
	h, _ := tx.Provided(HandoffName).(Handoff)
	if h == nil || most <= 0 {
		return l
	}
	l.h, l.r = h, h.Reserve(merchantID, most)
	if l.r.Empty() {
		return l
	}
	tx.OnEnd(func(committed bool) {
		if committed {
			l.h.Start(l.r, l.leased)
		} else {
			l.h.Release(l.r)
		}
	})
	return l
}

// Args are the values of DeliveriesLeased's three parameters: the
// endpoints with room, their room, and the lease in microseconds.
func (l *Lease) Args() []any {
	eps, room := l.r.Endpoints, l.r.Room
	if eps == nil {
		eps, room = []string{}, []int64{}
	}
	return []any{pq.StringArray(eps), pq.Int64Array(room), l.r.Lease.Microseconds()}
}

// Took records the leased deliveries the statement returned (its
// LeasedRows column; NULL when none) and returns how many there are.
func (l *Lease) Took(rows []byte) (int, error) {
	if len(rows) == 0 {
		return 0, nil
	}
	if err := json.Unmarshal(rows, &l.leased); err != nil {
		return 0, fmt.Errorf("leased deliveries: %w", err)
	}
	return len(l.leased), nil
}

// DeliveriesLeased is DeliveriesOf with the hand-off: the endpoints with
// room ($eps, text[]) get up to their room ($room, bigint[]) of the
// statement's deliveries leased for $lease microseconds, attempt 1
// numbered, as a claim would (see claimSQL in package webhooks); the
// others are inserted pending for a claim. ev needs mode, id, type,
// created_at, seq, data and occurred_at. The statement selects LeasedRows
// for Lease.Took. The endpoints are read by merchant, so every table the
// statement reads is read by one merchant.
func DeliveriesLeased(merchant, eps, room, lease string) string {
	return `dw AS (
		SELECT w.merchant_id, w.mode, 'dlv_' || replace(gen_random_uuid()::text, '-', '') AS id, ev.id AS event_id,
			w.id AS endpoint_id, ev.created_at AS event_created_at, w.url, w.secrets,
			ev.seq, ev.type, ev.data, ev.occurred_at,
			row_number() OVER (PARTITION BY w.id) <= coalesce(h.room, 0) AS leased
		FROM ev CROSS JOIN LATERAL (SELECT w.merchant_id, w.mode, w.id, w.url,
				CASE WHEN w.previous_secret IS NOT NULL AND w.previous_secret_expires_at > now()
					THEN ARRAY[w.secret, w.previous_secret] ELSE ARRAY[w.secret] END AS secrets
			FROM webhook_endpoints w
			WHERE w.merchant_id = ` + merchant + ` AND w.mode = ev.mode AND w.enabled AND w.removed_at IS NULL
				AND (cardinality(w.event_types) = 0 OR ev.type = ANY (w.event_types)) OFFSET 0) w
		LEFT JOIN unnest(` + eps + `::text[], ` + room + `::bigint[]) AS h (endpoint_id, room) ON h.endpoint_id = w.id
	), d AS (
		INSERT INTO webhook_deliveries (merchant_id, mode, id, event_id, endpoint_id, event_created_at, attempts, leased_at, leased_until)
		SELECT dw.merchant_id, dw.mode, dw.id, dw.event_id, dw.endpoint_id, dw.event_created_at,
			CASE WHEN dw.leased THEN 1 ELSE 0 END, CASE WHEN dw.leased THEN clock_timestamp() END,
			CASE WHEN dw.leased THEN clock_timestamp() + ` + lease + ` * interval '1 microsecond' END
		FROM dw
		RETURNING 1
	)`
}

// LeasedRows is the column of a statement using DeliveriesLeased that
// returns its leased deliveries (for Lease.Took).
const LeasedRows = `(SELECT json_agg(json_build_object('merchant_id', dw.merchant_id, 'mode', dw.mode, 'id', dw.id,
		'endpoint_id', dw.endpoint_id, 'url', dw.url, 'secrets', dw.secrets,
		'event', json_build_object('id', dw.event_id, 'seq', dw.seq, 'type', dw.type, 'data', dw.data,
			'created_at', dw.event_created_at, 'occurred_at', dw.occurred_at)))
	FROM dw WHERE dw.leased)`
