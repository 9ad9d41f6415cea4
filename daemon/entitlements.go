package daemon

import (
	"net/http"

	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/entitlements"
)

func (s *Server) createEntitlementGrant(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	o, err := s.decodeBody(w, r)
	if err != nil {
		return err
	}
	in, err := entitlements.Decode(o)
	if err != nil {
		return err
	}
	g, err := entitlements.Grant(r.Context(), s.db, p.Scope, in, s.now(p))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, g.Wire())
	return nil
}

func (s *Server) checkEntitlement(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	res, err := s.checker.Check(r.Context(), p.Scope, r.PathValue("customer"), r.PathValue("feature_key"), s.now(p))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res.Wire())
	return nil
}
