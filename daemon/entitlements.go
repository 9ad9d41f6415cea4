package daemon

import (
	"net/http"
	"strconv"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/customers"
	"github.com/tollgatehq/tollgate/internal/entitlements"
	"github.com/tollgatehq/tollgate/internal/fields"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

type entitlementGrantJSON struct {
	Object      string  `json:"object"`
	ID          string  `json:"id"`
	Feature     string  `json:"feature"`
	CustomerID  string  `json:"customer_id"`
	LimitValue  *string `json:"limit_value"`
	StartsAt    string  `json:"starts_at"`
	ActiveUntil *string `json:"active_until"`
	CreatedAt   string  `json:"created_at"`
	Livemode    bool    `json:"livemode"`
}

func entitlementGrantToJSON(g entitlements.Grant) entitlementGrantJSON {
	j := entitlementGrantJSON{
		Object: "entitlement_grant", ID: g.ID, Feature: g.FeatureKey, CustomerID: g.CustomerID,
		StartsAt: timestamp(g.StartsAt), ActiveUntil: optTimestamp(g.ActiveUntil), CreatedAt: timestamp(g.CreatedAt), Livemode: g.Mode == tenant.Live,
	}
	if g.Limit != nil {
		l := strconv.FormatInt(*g.Limit, 10)
		j.LimitValue = &l
	}
	return j
}

// entitlementJSON is a check result; a boolean feature omits limit, used
// and remaining, and a metered one without a limit omits limit and
// remaining.
type entitlementJSON struct {
	Object     string  `json:"object"`
	CustomerID string  `json:"customer_id"`
	Feature    string  `json:"feature"`
	Entitled   bool    `json:"entitled"`
	Reason     string  `json:"reason"`
	Limit      *string `json:"limit,omitempty"`
	Used       *string `json:"used,omitempty"`
	Remaining  *string `json:"remaining,omitempty"`
	Livemode   bool    `json:"livemode"`
}

func entitlementToJSON(r entitlements.Result) entitlementJSON {
	j := entitlementJSON{Object: "entitlement", CustomerID: r.CustomerID, Feature: r.FeatureKey, Entitled: r.Entitled,
		Reason: r.Reason, Livemode: r.Mode == tenant.Live}
	if r.Metered {
		used := r.Used
		j.Used, j.Limit, j.Remaining = &used, r.Limit, r.Remaining
	}
	return j
}

// entitlementGrantInput reads POST /v1/entitlement_grants' schema (shared
// with the MCP tool).
func entitlementGrantInput(o *fields.Object) (entitlements.GrantInput, error) {
	in := entitlements.GrantInput{
		FeatureKey: o.RequiredString("feature_key", 0, 0),
		Customer: customers.Ref{
			ID:         o.String("customer_id", 0, 0),
			ExternalID: o.String("external_customer_id", 0, 0),
		},
		ActiveUntil: o.Time("active_until"),
	}
	if a, ok := o.Amount("limit_value"); ok {
		l := int64(a)
		in.Limit = &l
	}
	return in, o.Err()
}

func (s *Server) createEntitlementGrant(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	o, err := s.decodeBody(w, r)
	if err != nil {
		return err
	}
	in, err := entitlementGrantInput(o)
	if err != nil {
		return err
	}
	var g entitlements.Grant
	err = store.Tx(r.Context(), s.db, func(tx *sqlx.Tx) error {
		g, err = entitlements.Create(r.Context(), tx, p.Scope, in, time.Now())
		return err
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, entitlementGrantToJSON(g))
	return nil
}

func (s *Server) checkEntitlement(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	res, err := entitlements.Check(r.Context(), s.db, p.Scope, r.PathValue("id"), r.PathValue("feature_key"), time.Now())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, entitlementToJSON(res))
	return nil
}
