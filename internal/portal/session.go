// Package portal owns customer portal sessions: a link the merchant's API
// makes (POST /v1/portal_sessions) that lets one customer of one merchant
// and mode see their subscriptions, usage, credits and payments and manage
// their subscriptions for an hour, and the reads the portal's pages show.
// Whatever a page changes, it changes through the domain function of the
// API operation that does the same, so events and rules are one.
package portal

import (
	"context"
	"encoding/json"
	"net"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/lib/pq"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/customers"
	"github.com/tollgatehq/tollgate/internal/fields"
	"github.com/tollgatehq/tollgate/internal/id"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// Lifetime is how long a session's link works, by the merchant's clock.
const Lifetime = time.Hour

// Limits of a create request.
const (
	MaxReturnURL = 2048
	MaxPlans     = 20
)

// Input is a POST /v1/portal_sessions request.
type Input struct {
	Customer  customers.Ref
	ReturnURL *string
	Plans     []string
}

// Decode reads the request's schema; errors are invalid_request naming the
// field.
func Decode(o *fields.Object) (Input, error) {
	in := Input{Customer: customers.DecodeRef(o), ReturnURL: o.String("return_url", 1, MaxReturnURL)}
	if raw := o.Raw("plans"); raw != nil {
		var ps []string
		switch {
		case json.Unmarshal(raw, &ps) != nil:
			o.Fail(apperr.Field("plans", "must be an array of plan ids (price_…)"))
		case len(ps) > MaxPlans:
			o.Fail(apperr.Field("plans", "at most %d plans", MaxPlans))
		}
		in.Plans = ps
	}
	return in, o.Err()
}

// Session is a stored portal session.
type Session struct {
	MerchantID string         `db:"merchant_id"`
	Mode       tenant.Mode    `db:"mode"`
	ID         string         `db:"id"`
	CustomerID string         `db:"customer_id"`
	ReturnURL  *string        `db:"return_url"`
	Plans      pq.StringArray `db:"plans"`
	CreatedAt  time.Time      `db:"created_at"`
	ExpiresAt  time.Time      `db:"expires_at"`
}

// Scope is the session's merchant and mode.
func (x Session) Scope() tenant.Scope { return tenant.Scope{MerchantID: x.MerchantID, Mode: x.Mode} }

// MayChangeTo reports whether planID is one of the plans the merchant let
// this customer switch to.
func (x Session) MayChangeTo(planID string) bool {
	for _, p := range x.Plans {
		if p == planID {
			return true
		}
	}
	return false
}

// Created is a new session with its link's secret, shown once.
type Created struct {
	Session
	Token string
}

// Wire returns the session's public form; url is its link.
func (c Created) Wire(url string) wire.PortalSession {
	return wire.PortalSession{Object: "portal_session", ID: c.ID, CustomerID: c.CustomerID, URL: url, ReturnURL: c.ReturnURL,
		ExpiresAt: wire.Timestamp(c.ExpiresAt)}
}

const columns = `merchant_id, mode, id, customer_id, return_url, plans, created_at, expires_at`

// Create makes a session for the scope's customer at now (the merchant's
// clock), good until now + Lifetime. The customer must exist (an unknown
// external_customer_id is not created), every plan must be one of the
// scope's, and return_url must be https (http only for a loopback host).
func Create(ctx context.Context, db *store.DB, s tenant.Scope, in Input, now time.Time) (Created, error) {
	if err := checkReturnURL(in.ReturnURL); err != nil {
		return Created{}, err
	}
	c, err := resolveCustomer(ctx, db, s, in.Customer)
	if err != nil {
		return Created{}, err
	}
	plans, err := checkPlans(ctx, db, s, in.Plans)
	if err != nil {
		return Created{}, err
	}
	token := id.Token()
	now = now.UTC().Truncate(time.Microsecond)
	var x Session
	err = db.GetContext(ctx, &x, `INSERT INTO portal_sessions (merchant_id, mode, id, token_hash, customer_id, return_url, plans, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING `+columns,
		s.MerchantID, s.Mode, id.New("ps"), id.HashToken(token), c.ID, in.ReturnURL, pq.StringArray(plans), now, now.Add(Lifetime))
	if err != nil {
		return Created{}, store.Translate(err)
	}
	return Created{Session: x, Token: token}, nil
}

// resolveCustomer finds the customer a request names, never creating one.
func resolveCustomer(ctx context.Context, q store.Querier, s tenant.Scope, r customers.Ref) (customers.Customer, error) {
	switch {
	case r.ID != nil && r.ExternalID != nil:
		return customers.Customer{}, apperr.Field("customer_id", "give customer_id or external_customer_id, not both")
	case r.ID != nil:
		return customers.Get(ctx, q, s, *r.ID)
	case r.ExternalID != nil:
		c, err := customers.Lookup(ctx, q, s, *r.ExternalID)
		if err == nil && (c.ExternalID == nil || *c.ExternalID != *r.ExternalID) {
			err = apperr.New(apperr.UnknownCustomer, "external_customer_id: no customer %q", apperr.Clip(*r.ExternalID))
		}
		return c, err
	}
	return customers.Customer{}, apperr.New(apperr.CustomerRequired, "customer_id or external_customer_id is required")
}

// checkPlans returns the distinct plan ids, each a plan of the scope.
func checkPlans(ctx context.Context, q store.Querier, s tenant.Scope, ids []string) ([]string, error) {
	out := []string{}
	seen := map[string]bool{}
	for _, p := range ids {
		if p == "" || fields.TextProblem(p) != "" || utf8.RuneCountInString(p) > 64 {
			return nil, apperr.Field("plans", "must be plan ids (price_…)")
		}
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return out, nil
	}
	var found []string
	err := q.SelectContext(ctx, &found, `SELECT id FROM plans WHERE merchant_id = $1 AND mode = $2 AND id = ANY($3)`,
		s.MerchantID, s.Mode, pq.StringArray(out))
	if err != nil {
		return nil, store.Translate(err)
	}
	if len(found) != len(out) {
		for _, p := range out {
			if !contains(found, p) {
				return nil, apperr.Field("plans", "no plan %q", apperr.Clip(p))
			}
		}
	}
	return out, nil
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// checkReturnURL accepts an absolute https URL, or http to a loopback host
// (a merchant's app in development).
func checkReturnURL(raw *string) error {
	if raw == nil {
		return nil
	}
	u, err := url.Parse(*raw)
	if err != nil || u.Host == "" || u.User != nil || fields.TextProblem(*raw) != "" {
		return apperr.Field("return_url", "must be an absolute https URL")
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if loopback(u.Hostname()) {
			return nil
		}
		return apperr.Field("return_url", "must be https (http only for localhost)")
	}
	return apperr.Field("return_url", "must be an absolute https URL")
}

func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// The answers of Lookup for a token that opens nothing.
var (
	// ErrUnknown: no session has this token.
	ErrUnknown = apperr.New(apperr.ResourceNotFound, "no such portal session")
	// ErrExpired: the session's hour is over.
	ErrExpired = apperr.New(apperr.ResourceNotFound, "this portal session has expired")
)

// Open is a session opened by its token: the session, its merchant's name,
// and the time of the request by the merchant's clock.
type Open struct {
	Session
	Merchant string
	Now      time.Time
}

// Lookup opens the session whose link carries token at the wall time
// (moved to the merchant's test clock in test mode). Returns ErrUnknown or
// ErrExpired; a token that is not a token is unknown without a query.
func Lookup(ctx context.Context, q store.Querier, token string, wall time.Time) (Open, error) {
	if len(token) != id.TokenLen || !base62(token) {
		return Open{}, ErrUnknown
	}
	var rows []struct {
		Session
		Merchant string `db:"merchant"`
		AheadUS  int64  `db:"ahead_us"`
	}
	err := q.SelectContext(ctx, &rows, `SELECT `+qualified+`, m.name AS merchant,
			CASE WHEN ps.mode = 'test' THEN coalesce(c.ahead_us, 0) ELSE 0 END AS ahead_us
		FROM portal_sessions ps JOIN merchants m ON m.id = ps.merchant_id
		LEFT JOIN test_clocks c ON c.merchant_id = ps.merchant_id
		WHERE ps.token_hash = $1`, id.HashToken(token))
	if err != nil {
		return Open{}, store.Translate(err)
	}
	if len(rows) == 0 {
		return Open{}, ErrUnknown
	}
	r := rows[0]
	now := wall.Add(time.Duration(r.AheadUS) * time.Microsecond)
	if !now.Before(r.ExpiresAt) {
		return Open{}, ErrExpired
	}
	return Open{Session: r.Session, Merchant: r.Merchant, Now: now}, nil
}

const qualified = `ps.merchant_id, ps.mode, ps.id, ps.customer_id, ps.return_url, ps.plans, ps.created_at, ps.expires_at`

func base62(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') {
			return false
		}
	}
	return true
}
