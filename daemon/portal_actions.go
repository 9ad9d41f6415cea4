package daemon

import (
	"net/http"
	"strings"

	"github.com/tollgatehq/tollgate/daemon/web"
	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/subscriptions"
)

// The portal's changes: POST forms, each checked for its origin and its
// session's form token, each acting on a subscription of the session's
// customer only (another id is the not-found page, and nothing changes)
// through the domain function of the API operation that does the same, so
// the change, its rules and its event are the API's. After a change the
// browser is sent back to the overview with a fixed notice (303).

// portalAction serves POST /portal/{token}/subscriptions/{id}/{action}.
func (s *Server) portalAction(w http.ResponseWriter, r *http.Request) {
	pr, ok := s.openPortal(w, r)
	if !ok {
		return
	}
	if err := s.forms.Check(w, r, pr.token); err != nil {
		dropBody(w, r)
		status, m := http.StatusForbidden, web.Message{ID: "forbidden", Heading: "This form cannot be sent",
			Paragraphs: []string{"It did not come from this page, or the page is out of date. Nothing was changed.", "Go back, reload the page and try again."}}
		if !web.Forbidden(err) {
			status, m.Heading = http.StatusBadRequest, "This form could not be read"
		}
		s.portalMessage(w, r, status, m)
		return
	}
	ctx, scope, id := r.Context(), pr.Scope(), r.PathValue("id")
	// The subscription must be the session's customer's: ids of others
	// answer as ids that do not exist.
	x, err := pr.Subscription(ctx, s.db, id)
	if err != nil {
		s.portalFailure(w, r, err)
		return
	}
	var done string
	switch r.PathValue("action") {
	case "change":
		next, err := s.portalChange(r, pr, x)
		if err != nil {
			s.portalFailure(w, r, err)
			return
		}
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	case "cancel":
		_, err = subscriptions.Cancel(ctx, s.db, scope, id, subscriptions.CancelInput{AtPeriodEnd: true}, pr.Now)
		done = "canceled"
	case "undo-cancel":
		_, err = subscriptions.UndoCancel(ctx, s.db, scope, id, pr.Now)
		done = "resumed"
	case "discount":
		if s.portalDiscount(w, r, pr, id) {
			http.Redirect(w, r, pr.base+"?done=discounted", http.StatusSeeOther)
		}
		return
	case "payer":
		_, err = subscriptions.ReplaceTestPayer(ctx, s.db, scope, id, r.PostForm.Get("payer"))
		done = "payer"
	default:
		s.portalMissing(w, r)
		return
	}
	if err != nil {
		s.portalFailure(w, r, err)
		return
	}
	http.Redirect(w, r, pr.base+"?done="+done, http.StatusSeeOther)
}

// portalDiscount applies the coupon code of the form to the subscription
// id as POST /v1/subscriptions/{id}/discount does (the same redemption and
// subscription.updated event), and reports whether it did. A code that
// cannot be used shows the overview again with a plain error, never the
// API's code or message (they may name other plans or coupons' terms).
func (s *Server) portalDiscount(w http.ResponseWriter, r *http.Request, pr portalRequest, id string) bool {
	code := strings.TrimSpace(r.PostForm.Get("code"))
	if code == "" {
		s.showOverview(w, r, pr, http.StatusBadRequest, &web.Notice{ID: "coupon-error", Text: "Enter a coupon code to apply it. Nothing was changed."})
		return false
	}
	_, err := subscriptions.SetDiscount(r.Context(), s.db, pr.Scope(), id, &code, pr.Now)
	switch {
	case err == nil:
		return true
	case apperr.CodeOf(err) == apperr.InvalidCoupon:
		s.showOverview(w, r, pr, http.StatusBadRequest, &web.Notice{ID: "coupon-error",
			Text: "This coupon code cannot be used: it may be mistyped, expired or used up, or not valid for this plan. Nothing was changed."})
	default:
		s.portalFailure(w, r, err)
	}
	return false
}
