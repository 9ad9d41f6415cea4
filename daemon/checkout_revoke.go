package daemon

import (
	"context"
	"math/big"
	"net/http"
	"net/url"
	"strings"

	"github.com/ethereum/go-ethereum/common"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/chain"
	"github.com/tollgatehq/tollgate/internal/chain/relayer"
	"github.com/tollgatehq/tollgate/internal/chainrail"
	"github.com/tollgatehq/tollgate/internal/checkout"
	"github.com/tollgatehq/tollgate/internal/fields"
	"github.com/tollgatehq/tollgate/internal/plans"
	"github.com/tollgatehq/tollgate/internal/subscriptions"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// Customers stop paying without gas: /checkout/{sub_…|price_…}/revoke.
// GET is the page (or, asking for JSON, the Revoke typed data the
// subscription's payer signs: Revoke(bytes32 planId, uint256 deadline) in
// the PlanManager's EIP-712 domain); POST {"payer", "deadline",
// "signature"} verifies it and has the relayer send
// PlanManager.revokeWithSignature. The watcher then sees PlanRevoked and
// the subscription becomes revoked. On a plan's address the subscription
// is the live one paid from the wallet the customer connects (payer).

// revocationAnswer is what POST …/revoke answers.
type revocationAnswer struct {
	Object       string `json:"object"` // "checkout_revocation"
	Status       string `json:"status"` // pending, or revoked when the chain already has it
	Subscription string `json:"subscription"`
	ReceiptURL   string `json:"receipt_url"`
}

// revokeTarget finds the live subscription a revocation at id is about:
// the subscription sub_…, or the one to plan price_… paid from payer.
func (s *Server) revokeTarget(ctx context.Context, id string, payer *common.Address) (subscriptions.Subscription, error) {
	switch {
	case strings.HasPrefix(id, "sub_"):
		x, _, err := s.liveSubscription(ctx, id)
		if err == nil && payer != nil {
			err = samePayer(x, *payer)
		}
		return x, err
	case strings.HasPrefix(id, "price_"):
		p, ok, err := plans.Get(ctx, s.db, id)
		if err != nil || !ok {
			return subscriptions.Subscription{}, notFoundUnless(err, id)
		}
		if p.Mode != tenant.Live || s.onchain == nil {
			return subscriptions.Subscription{}, apperr.New(apperr.ResourceNotFound, "no live plan %q", truncate(id, 80))
		}
		if payer == nil {
			return subscriptions.Subscription{}, apperr.Field("payer", "is required on a plan's address: the wallet you subscribed with")
		}
		x, ok, err := subscriptions.LiveOfPayer(ctx, s.db, p.Scope(), p.ID, payer.Hex())
		if err != nil {
			return x, err
		}
		if !ok || x.AuthorizationKey == nil {
			return x, apperr.New(apperr.ResourceNotFound, "no active subscription to plan %s is paid from %s", p.ID, payer.Hex())
		}
		return x, nil
	}
	return subscriptions.Subscription{}, notFoundUnless(nil, id)
}

// checkoutRevokePage serves GET /checkout/{id}/revoke: the page, or to a
// client asking for JSON the typed data to sign (?payer=0x…, required on a
// plan's address).
func (s *Server) checkoutRevokePage(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if acceptsJSON(r) {
		s.revocationTerms(w, r, id)
		return
	}
	v, err := s.revokeView(r.Context(), id, r.URL.Query().Get("deadline"))
	status := http.StatusOK
	switch {
	case err != nil:
		v, status = s.failurePage(r, err)
	case v.Kind == "":
		status = http.StatusNotFound
	}
	s.writePage(w, status, v)
}

func (s *Server) revocationTerms(w http.ResponseWriter, r *http.Request, id string) {
	var payer *common.Address
	if q := r.URL.Query().Get("payer"); q != "" {
		a, err := chain.ParseAddress(q)
		if err != nil {
			writeError(w, r, s.log, apperr.Field("payer", "%s", message(err)))
			return
		}
		payer = &a
	}
	x, err := s.revokeTarget(r.Context(), id, payer)
	if err == nil && !x.Live() {
		err = apperr.New(apperr.InvalidRequest, "subscription %s is %s: there is nothing to revoke", x.ID, x.Status)
	}
	if err != nil {
		writeError(w, r, s.log, err)
		return
	}
	rv, err := s.onchain.RevocationTerms(r.Context(), x.Scope(), *x.AuthorizationKey)
	if err != nil {
		writeError(w, r, s.log, err)
		return
	}
	td := chain.WalletTypedData(rv.TypedData)
	writeJSON(w, http.StatusOK, checkoutTerms{Object: "checkout_terms", Kind: "revoke", Subscription: x.ID, TypedData: &td})
}

// checkoutRevoke serves POST /checkout/{id}/revoke (JSON): 202 pending once
// the relayer has the revocation, 200 revoked when the chain already has
// one, or the error envelope (400 naming the field, 404).
func (s *Server) checkoutRevoke(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	id := r.PathValue("id")
	body, err := readBody(w, r, 64<<10)
	if err != nil {
		writeError(w, r, s.log, err)
		return
	}
	payer, deadline, sig, err := parseRevocation(body)
	if err != nil {
		writeError(w, r, s.log, err)
		return
	}
	x, err := s.revokeTarget(ctx, id, payer)
	if err == nil && !x.Live() {
		err = apperr.New(apperr.InvalidRequest, "subscription %s is %s: there is nothing to revoke", x.ID, x.Status)
	}
	if err != nil {
		writeError(w, r, s.log, err)
		return
	}
	out := revocationAnswer{Object: "checkout_revocation", Status: "pending", Subscription: x.ID,
		ReceiptURL: "/checkout/" + url.PathEscape(x.ID) + "/revoke?deadline=" + deadline.String()}
	_, err = s.onchain.Revoke(ctx, x.Scope(), *x.AuthorizationKey, deadline, sig)
	if f := asChainFailure(err); f != nil && f.Reason == chain.AuthorizationRevoked {
		out.Status = "revoked"
		writeJSON(w, http.StatusOK, out)
		return
	}
	if f := asChainFailure(err); f != nil {
		err = apperr.New(apperr.PaymentFailed, "the revocation cannot be sent: %s", f.Reason)
	}
	if err != nil {
		writeError(w, r, s.log, err)
		return
	}
	writeJSON(w, http.StatusAccepted, out)
}

// parseRevocation reads {"payer" (optional), "deadline", "signature"}.
func parseRevocation(body []byte) (*common.Address, *big.Int, []byte, error) {
	o, err := fields.Decode(body)
	if err != nil {
		return nil, nil, nil, err
	}
	rawDeadline := o.Raw("deadline")
	payerText := o.String("payer", 1, 64)
	sigText := o.String("signature", 1, 2+2*4096)
	if err := o.Err(); err != nil {
		return nil, nil, nil, err
	}
	var payer *common.Address
	if payerText != nil {
		a, err := chain.ParseAddress(*payerText)
		if err != nil {
			return nil, nil, nil, apperr.Field("payer", "%s", message(err))
		}
		payer = &a
	}
	deadline, err := uintField("deadline", rawDeadline)
	if err != nil {
		return nil, nil, nil, err
	}
	if sigText == nil {
		return nil, nil, nil, apperr.Field("signature", "is required")
	}
	sig, err := chain.ParseSignature(*sigText)
	if err != nil {
		return nil, nil, nil, apperr.Field("signature", "%s", message(err))
	}
	return payer, deadline, sig, nil
}

// revokeView is the revoke page: the subscription's (or the plan's) page
// with the section that signs the revocation; deadline, from the page's
// own POST, names the revocation submitted, to show how it stands.
func (s *Server) revokeView(ctx context.Context, id, deadline string) (checkoutView, error) {
	var v checkoutView
	var x *subscriptions.Subscription
	switch {
	case strings.HasPrefix(id, "sub_"):
		var err error
		if v, err = s.subscriptionView(ctx, id); err != nil || v.Kind == "" {
			return v, err
		}
		sub, _, err := s.liveSubscription(ctx, id)
		if err != nil {
			return notFoundView(), err
		}
		x = &sub
	case strings.HasPrefix(id, "price_"):
		pg, ok, err := checkout.LoadPlanPage(ctx, s.db, id, "")
		if err != nil || !ok || pg.Mode != tenant.Live || s.onchain == nil {
			return notFoundView(), err
		}
		v = s.planView(pg, "")
	default:
		return notFoundView(), nil
	}
	v.Title, v.Notice = "Stop paying for "+v.Heading, nil
	lv := &liveView{Kind: "revoke", AuthorizationURL: "/checkout/" + url.PathEscape(id) + "/revoke", Network: s.onchain.Network(),
		ChainID: s.onchain.ChainID(), Confirmations: s.onchain.Confirmations(), Script: s.checkout.liveScript}
	if x != nil {
		var st relayer.Settlement
		var ok bool
		if d, good := new(big.Int).SetString(deadline, 10); good && d.Sign() > 0 && d.BitLen() <= 256 {
			var err error
			if st, ok, err = s.onchain.CustomerState(ctx, x.Scope(), chainrail.RevocationKey(*x.AuthorizationKey, d)); err != nil {
				return v, err
			}
		}
		switch {
		case !x.Live():
			lv.Ended = true
		case ok && st.State != relayer.Reverted && st.State != relayer.Failed:
			// Sent; the subscription turns revoked once the watcher reads
			// it, and the page reloads itself until then.
			lv.Pending, lv.TxHash = true, txText(st.TxHash)
		case ok:
			lv.Failure = string(st.Reason())
		}
	}
	v.Live = lv
	return v, nil
}

func txText(h common.Hash) string {
	if h == (common.Hash{}) {
		return ""
	}
	return strings.ToLower(h.Hex())
}
