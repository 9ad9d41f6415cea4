package daemon

import (
	"net/http"

	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/features"
)

func (s *Server) createFeature(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	o, err := s.decodeBody(w, r)
	if err != nil {
		return err
	}
	in, err := features.Decode(o)
	if err != nil {
		return err
	}
	f, _, err := features.Create(r.Context(), s.db, p.Scope, in, s.now(p))
	if err != nil {
		return err
	}
	// Like meters: a repeat of a key answers 201 with the existing feature.
	writeJSON(w, http.StatusCreated, f.Wire())
	return nil
}
