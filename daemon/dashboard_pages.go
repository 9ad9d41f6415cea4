package daemon

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/tollgatehq/tollgate/daemon/web"
	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/audit"
	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/money"
	"github.com/tollgatehq/tollgate/internal/overview"
	"github.com/tollgatehq/tollgate/internal/page"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/testclock"
	"github.com/tollgatehq/tollgate/internal/webhooks"
)

// usdcAmount is an amount in USDC for a page.
func usdcAmount(a money.Amount) string { return a.USDC() + " USDC" }

// scopeNow is the merchant's time in the session's mode: the test clock's
// in test mode, as the API's.
func (s *Server) scopeNow(ctx context.Context, d dashRequest) (time.Time, error) {
	now := s.cfg.Clock.Now()
	if d.Mode != tenant.Test {
		return now, nil
	}
	ahead, err := testclock.Ahead(ctx, s.db, d.MerchantID)
	return now.Add(ahead), err
}

// dashOverviewView is the overview's body.
type dashOverviewView struct {
	overview.Overview
	Chart web.Chart
}

func (s *Server) dashOverview(w http.ResponseWriter, r *http.Request) {
	d, ok := s.openDashboard(w, r)
	if !ok {
		return
	}
	now, err := s.scopeNow(r.Context(), d)
	if err != nil {
		s.dashFailure(w, r, err)
		return
	}
	o, err := overview.Get(r.Context(), s.db, d.Scope(), now)
	if err != nil {
		s.dashFailure(w, r, err)
		return
	}
	v := dashOverviewView{Overview: o, Chart: web.Chart{Label: "Revenue per day, last " + strconv.Itoa(overview.Days) + " days (UTC)", Unit: "USDC"}}
	for _, day := range o.Revenue {
		v.Chart.Bars = append(v.Chart.Bars, web.Bar{Label: day.Date.Format("2 Jan"), Value: day.Revenue.USDC()})
	}
	f := d.frame("Overview", "Overview")
	f.Notice = doneNotice(r)
	f.Body = d.page(v)
	s.renderDash(w, r, http.StatusOK, dashOverviewPage, f)
}

// dashDevelopersView is the Developers page's body: keys and endpoints of the
// session's mode, and a key or secret just made (shown this once).
type dashDevelopersView struct {
	Keys      []auth.Key
	Endpoints []webhooks.Endpoint
	NewKey    string
	NewSecret string
	NewFor    string // the id the new key or secret belongs to
}

func (s *Server) dashDevelopers(w http.ResponseWriter, r *http.Request) {
	d, ok := s.openDashboard(w, r)
	if !ok {
		return
	}
	s.renderDevelopers(w, r, d, http.StatusOK, dashDevelopersView{}, doneNotice(r))
}

func (s *Server) renderDevelopers(w http.ResponseWriter, r *http.Request, d dashRequest, status int, v dashDevelopersView, notice *web.Notice) {
	keys, err := auth.ListKeys(r.Context(), s.db, d.MerchantID)
	if err != nil {
		s.dashFailure(w, r, err)
		return
	}
	for _, k := range keys {
		if k.Mode == d.Mode {
			v.Keys = append(v.Keys, k)
		}
	}
	es, err := webhooks.List(r.Context(), s.db, d.MerchantID)
	if err != nil {
		s.dashFailure(w, r, err)
		return
	}
	for _, e := range es {
		if e.Mode == d.Mode {
			e.Secret = "" // never on a page after the one that made it
			v.Endpoints = append(v.Endpoints, e)
		}
	}
	f := d.frame("Developers", "Developers")
	f.Notice = notice
	f.Body = d.page(v)
	s.renderDash(w, r, status, dashDevelopersPage, f)
}

// dashKeyCreate makes a key in the session's mode and shows it, once, in
// this answer (never in an address or a later page).
func (s *Server) dashKeyCreate(w http.ResponseWriter, r *http.Request) {
	d, ok := s.openDashboard(w, r)
	if !ok {
		return
	}
	type created struct {
		key    auth.Key
		secret string
	}
	c, err := audit.InTx(r.Context(), s.db, d.actor(), func(tx *store.Tx) (created, error) {
		k, secret, err := auth.CreateKey(r.Context(), tx, d.MerchantID, d.Mode)
		return created{k, secret}, err
	}, func(c created) audit.Entry {
		return audit.Entry{MerchantID: d.MerchantID, Mode: d.Mode, Action: audit.KeyCreate, Target: c.key.ID, Detail: c.key.Hint}
	})
	if err != nil {
		s.dashFailure(w, r, err)
		return
	}
	s.renderDevelopers(w, r, d, http.StatusOK, dashDevelopersView{NewKey: c.secret, NewFor: c.key.ID},
		&web.Notice{ID: "done", Text: "Key " + c.key.ID + " created. Copy it now: it is shown this once.", Done: true})
}

// dashKeyRevoke revokes one of the session's merchant's keys; another
// merchant's id is not found.
func (s *Server) dashKeyRevoke(w http.ResponseWriter, r *http.Request) {
	d, ok := s.openDashboard(w, r)
	if !ok {
		return
	}
	keyID := r.PathValue("id")
	err := audit.ChangeRow(r.Context(), s.db, d.actor(), d.scope(), "api_keys", keyID, audit.KeyRevoke, func(tx *store.Tx) error {
		return auth.RevokeKey(r.Context(), tx, keyID)
	})
	if err != nil {
		s.dashFailure(w, r, err)
		return
	}
	s.dashDone(w, r, d.base+"/developers", "revoked")
}

// dashEndpointAdd registers an endpoint in the session's mode and shows
// its secret once.
func (s *Server) dashEndpointAdd(w http.ResponseWriter, r *http.Request) {
	d, ok := s.openDashboard(w, r)
	if !ok {
		return
	}
	in := webhooks.Input{MerchantID: d.MerchantID, Mode: d.Mode, URL: r.PostForm.Get("url"), AllowInsecure: s.cfg.AllowInsecureWebhooks}
	e, err := audit.InTx(r.Context(), s.db, d.actor(), func(tx *store.Tx) (webhooks.Endpoint, error) {
		return webhooks.Add(r.Context(), tx, in)
	}, func(e webhooks.Endpoint) audit.Entry {
		return audit.Entry{MerchantID: e.MerchantID, Mode: e.Mode, Action: audit.EndpointCreate, Target: e.ID, Detail: e.URL}
	})
	if err != nil {
		if n := dashNotice(err); apperr.CodeOf(err) == apperr.InvalidRequest {
			s.renderDevelopers(w, r, d, http.StatusBadRequest, dashDevelopersView{}, n)
			return
		}
		s.dashFailure(w, r, err)
		return
	}
	s.renderDevelopers(w, r, d, http.StatusOK, dashDevelopersView{NewSecret: e.Secret, NewFor: e.ID},
		&web.Notice{ID: "done", Text: "Endpoint " + e.ID + " added. Copy its signing secret now: it is shown this once.", Done: true})
}

// dashEndpointChange disables, enables or rotates the secret of one of the
// session's merchant's endpoints.
func (s *Server) dashEndpointChange(w http.ResponseWriter, r *http.Request) {
	d, ok := s.openDashboard(w, r)
	if !ok {
		return
	}
	endpointID := r.PathValue("id")
	var rotated webhooks.Endpoint
	var action string
	var change func(tx *store.Tx) error
	switch r.PathValue("action") {
	case "disable", "enable":
		enable := r.PathValue("action") == "enable"
		action = map[bool]string{true: audit.EndpointEnable, false: audit.EndpointDisable}[enable]
		change = func(tx *store.Tx) error { return webhooks.SetEnabled(r.Context(), tx, endpointID, enable) }
	case "rotate":
		action = audit.EndpointRotate
		change = func(tx *store.Tx) (err error) {
			rotated, err = webhooks.RotateSecret(r.Context(), tx, endpointID, webhooks.DefaultOverlap)
			return err
		}
	default:
		s.dashMissing(w, r)
		return
	}
	if err := audit.ChangeRow(r.Context(), s.db, d.actor(), d.scope(), "webhook_endpoints", endpointID, action, change); err != nil {
		s.dashFailure(w, r, err)
		return
	}
	if action != audit.EndpointRotate {
		s.dashDone(w, r, d.base+"/developers", map[bool]string{true: "enabled", false: "disabled"}[action == audit.EndpointEnable])
		return
	}
	s.renderDevelopers(w, r, d, http.StatusOK, dashDevelopersView{NewSecret: rotated.Secret, NewFor: rotated.ID},
		&web.Notice{ID: "done", Text: "New signing secret for " + rotated.ID + ": copy it now, it is shown this once. The previous one keeps signing for 24 hours.", Done: true})
}

func (s *Server) dashAudit(w http.ResponseWriter, r *http.Request) {
	dashList(s, w, r, "/audit", "Audit log", dashAuditPage, func(ctx context.Context, d dashRequest, p page.Params) (page.Result[audit.Row], error) {
		p.Limit = 50
		return audit.List(ctx, s.db, audit.Filter{MerchantID: d.MerchantID, Page: p})
	})
}
