package daemon

import (
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"html/template"
	"net/http"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/audit"
	"github.com/tollgatehq/tollgate/internal/chainrail"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/wallet"
)

// dashWalletJS is the one script of the dashboard: the browser wallet's
// part of a wallet change. Its hash is the page's only script-src.
//
//go:embed pages/dashboard_wallet.js
var dashWalletJS string

const dashWalletPage = "pages/dashboard_wallet.html"

// dashWalletView is the wallet page's body.
type dashWalletView struct {
	Wallet wallet.Wallet
	Script template.JS
}

func (s *Server) dashWallet(w http.ResponseWriter, r *http.Request) {
	d, ok := s.openDashboard(w, r)
	if !ok {
		return
	}
	wal, _, err := wallet.Get(r.Context(), s.db, d.Scope())
	if err != nil {
		s.dashFailure(w, r, err)
		return
	}
	f := d.frame("Settlement wallet", "Wallet")
	f.Notice = doneNotice(r)
	f.Body = d.page(dashWalletView{Wallet: wal, Script: template.JS(dashWalletJS)}) // #nosec: our own embedded file
	s.renderDash(w, r, http.StatusOK, dashWalletPage, f)
}

// dashWalletChallenge issues the challenge `admin wallet challenge` issues,
// for the session's merchant and mode, and answers its message as JSON for
// the page's script (hex, as personal_sign takes it).
func (s *Server) dashWalletChallenge(w http.ResponseWriter, r *http.Request) {
	d, ok := s.openDashboard(w, r)
	if !ok {
		return
	}
	c, err := audit.InTx(r.Context(), s.db, d.actor(), func(tx *store.Tx) (wallet.Challenge, error) {
		return wallet.NewChallenge(r.Context(), tx, d.Scope(), r.PostForm.Get("address"), s.cfg.Clock.Now())
	}, func(c wallet.Challenge) audit.Entry {
		return audit.Entry{MerchantID: d.MerchantID, Mode: d.Mode, Action: audit.WalletChallenge, Target: c.Address}
	})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if err != nil {
		e, status := s.pageError(r, err)
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": e.Message})
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]string{"message": c.Message, "message_hex": "0x" + hex.EncodeToString([]byte(c.Message)),
		"expires_at": c.ExpiresAt.UTC().Format("2006-01-02T15:04:05Z")})
}

// dashWalletSet verifies the signature as `admin wallet set` does and makes
// the address the session's merchant's wallet in its mode.
func (s *Server) dashWalletSet(w http.ResponseWriter, r *http.Request) {
	d, ok := s.openDashboard(w, r)
	if !ok {
		return
	}
	var v wallet.Verifier = wallet.ECDSA{}
	if s.onchain != nil {
		// A smart-contract wallet signs by its code (ERC-1271), on the
		// chain live mode settles on.
		v = chainrail.Verifier{B: s.onchain.Backend()}
	}
	wal, err := wallet.SetWith(r.Context(), s.db, v, d.Scope(), r.PostForm.Get("address"), r.PostForm.Get("signature"), s.cfg.Clock.Now())
	if err != nil {
		if apperr.CodeOf(err) == apperr.InvalidRequest {
			f := d.frame("Settlement wallet", "Wallet")
			f.Notice = dashNotice(err)
			cur, _, gerr := wallet.Get(r.Context(), s.db, d.Scope())
			if gerr != nil {
				s.dashFailure(w, r, gerr)
				return
			}
			f.Body = d.page(dashWalletView{Wallet: cur, Script: template.JS(dashWalletJS)}) // #nosec: our own embedded file
			s.renderDash(w, r, http.StatusBadRequest, dashWalletPage, f)
			return
		}
		s.dashFailure(w, r, err)
		return
	}
	e := audit.Entry{MerchantID: d.MerchantID, Mode: d.Mode, Action: audit.WalletSet, Target: wal.Address}
	if len(wal.Previous) > 0 {
		e.Detail = "replaced " + wal.Previous[0].Address
	}
	// The change ran its own transaction (the signature is checked before
	// any lock): its entry follows it.
	if err := audit.Record(r.Context(), s.db, d.actor(), e); err != nil {
		s.dashFailure(w, r, err)
		return
	}
	s.dashDone(w, r, d.base+"/wallet", "wallet")
}
