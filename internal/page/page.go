// Package page implements the list envelope's cursor pagination. Lists are
// ordered newest first by (created_at, seq); seq is a per-table identity that
// breaks ties between rows created in the same instant (e.g. one transaction).
//
// The cursor is a date-time, as the API promises: the row's created_at with
// six fractional digits, followed by the tiebreak seq as further fractional
// digits. "2026-11-22T03:49:26.123456" + "42" + "Z" means "before the row at
// .123456 with seq 42". A plain date-time (six or fewer fractional digits)
// means "created strictly before that instant".
package page

import (
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/fields"
)

// DefaultLimit and MaxLimit are the API's list limits.
const (
	DefaultLimit = 25
	MaxLimit     = 100
)

// Cursor is a position in a list: rows before (At, Seq) in newest-first order.
type Cursor struct {
	At  time.Time
	Seq int64 // 0: every row at At is excluded
}

// Params are a list request's parameters.
type Params struct {
	Limit  int
	Before *Cursor
}

var dateTime = regexp.MustCompile(`^(\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2})(?:\.(\d{1,40}))?([Zz]|[+-]\d{2}:\d{2})$`)

// ParseCursor reads a `before` value.
func ParseCursor(s string) (Cursor, error) {
	m := dateTime.FindStringSubmatch(s)
	if m == nil {
		return Cursor{}, apperr.Field("before", "must be a date-time cursor such as a previous page's next_cursor")
	}
	zone := strings.ToUpper(m[3])
	base, err := time.Parse("2006-01-02T15:04:05Z07:00", strings.Replace(strings.ToUpper(m[1]), " ", "T", 1)+zone)
	if err != nil {
		return Cursor{}, apperr.Field("before", "not a valid date-time: %s", s)
	}
	frac := m[2]
	micros := frac
	var seq int64
	if len(frac) > 6 {
		micros = frac[:6]
		if seq, err = strconv.ParseInt(frac[6:], 10, 64); err != nil {
			return Cursor{}, apperr.Field("before", "cursor out of range")
		}
	}
	micros += strings.Repeat("0", 6-len(micros))
	us, _ := strconv.Atoi(micros)
	at := base.Add(time.Duration(us) * time.Microsecond).UTC()
	if at.Year() < 1 || at.Year() > 9999 {
		return Cursor{}, apperr.Field("before", "date-time out of range: %s", s)
	}
	return Cursor{At: at, Seq: seq}, nil
}

// String formats c as a cursor date-time.
func (c Cursor) String() string {
	s := c.At.UTC().Format("2006-01-02T15:04:05.000000")
	if c.Seq > 0 {
		s += strconv.FormatInt(c.Seq, 10)
	}
	return s + "Z"
}

// ParseQuery reads `limit` and `before` from a query string. Any other
// problem is invalid_request naming the parameter; limit is never clamped.
func ParseQuery(q url.Values) (Params, error) {
	p := Params{Limit: DefaultLimit}
	if q.Has("limit") {
		n, err := strconv.Atoi(q.Get("limit"))
		if err != nil || n < 1 || n > MaxLimit {
			return p, apperr.Field("limit", "must be an integer from 1 to %d", MaxLimit)
		}
		p.Limit = n
	}
	if q.Has("before") {
		c, err := ParseCursor(q.Get("before"))
		if err != nil {
			return p, err
		}
		p.Before = &c
	}
	return p, nil
}

// Where returns the SQL condition selecting rows before p.Before (or TRUE),
// with placeholders numbered from n, and the arguments to append.
func (p Params) Where(n int) (string, []any) {
	if p.Before == nil {
		return "TRUE", nil
	}
	return fmt.Sprintf("(created_at, seq) < ($%d, $%d)", n, n+1), []any{p.Before.At, p.Before.Seq}
}

// Order is the ORDER BY and LIMIT clause; it fetches one extra row to learn
// has_more.
func (p Params) Order() string {
	return fmt.Sprintf("ORDER BY created_at DESC, seq DESC LIMIT %d", p.Limit+1)
}

// Result is one page.
type Result[T any] struct {
	Items   []T
	HasMore bool
	Next    *Cursor
}

// Build trims the extra row fetched by Order and computes the next cursor
// from the last item's position.
func Build[T any](rows []T, p Params, pos func(T) Cursor) Result[T] {
	r := Result[T]{Items: rows}
	if len(rows) > p.Limit {
		r.Items = rows[:p.Limit]
		r.HasMore = true
		c := pos(r.Items[len(r.Items)-1])
		r.Next = &c
	}
	if r.Items == nil {
		r.Items = []T{}
	}
	return r
}

// DecodeArgs reads limit and before from a JSON object (MCP tool
// arguments) with exactly ParseQuery's rules and messages: each value is
// taken as the text a query string would carry.
func DecodeArgs(o *fields.Object) (Params, error) {
	q := url.Values{}
	if raw := o.Raw("limit"); raw != nil {
		q.Set("limit", strings.Trim(string(raw), `"`))
	}
	if before := o.String("before", 0, 0); before != nil {
		q.Set("before", *before)
	}
	if err := o.Err(); err != nil {
		return Params{Limit: DefaultLimit}, err
	}
	return ParseQuery(q)
}
