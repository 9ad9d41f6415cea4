package daemon

import (
	"net/http"

	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/features"
	"github.com/tollgatehq/tollgate/internal/fields"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

type featureJSON struct {
	Object      string  `json:"object"`
	ID          string  `json:"id"`
	Key         string  `json:"key"`
	Name        string  `json:"name"`
	Type        string  `json:"type"`
	MeterID     *string `json:"meter_id"`
	UnitLabel   *string `json:"unit_label"`
	Description *string `json:"description"`
	CreatedAt   string  `json:"created_at"`
	Livemode    bool    `json:"livemode"`
}

func featureToJSON(f features.Feature) featureJSON {
	return featureJSON{
		Object: "feature", ID: f.ID, Key: f.Key, Name: f.Name, Type: f.Type, MeterID: f.MeterID,
		UnitLabel: f.UnitLabel, Description: f.Description, CreatedAt: timestamp(f.CreatedAt), Livemode: f.Mode == tenant.Live,
	}
}

// featureInput reads POST /v1/features' schema (shared with the MCP tool).
func featureInput(o *fields.Object) (features.Input, error) {
	in := features.Input{
		Key:         o.RequiredString("key", 0, 0),
		Name:        o.RequiredString("name", 0, 0),
		Meter:       o.String("meter", 0, 0),
		UnitLabel:   o.String("unit_label", 0, 0),
		Description: o.String("description", 0, 0),
	}
	if t := o.String("type", 0, 0); t != nil {
		in.Type = *t
	}
	return in, o.Err()
}

func (s *Server) createFeature(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	o, err := s.decodeBody(w, r)
	if err != nil {
		return err
	}
	in, err := featureInput(o)
	if err != nil {
		return err
	}
	f, _, err := features.Create(r.Context(), s.db, p.Scope, in)
	if err != nil {
		return err
	}
	// Like meters: a repeat of a key answers 201 with the existing feature.
	writeJSON(w, http.StatusCreated, featureToJSON(f))
	return nil
}
