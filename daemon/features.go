package daemon

import (
	"net/http"

	"github.com/tollgatehq/tollgate/internal/apispec"
	"github.com/tollgatehq/tollgate/internal/features"
	"github.com/tollgatehq/tollgate/internal/ratelimit"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// featureOperations are features, created idempotently by key.
func featureOperations() []operation {
	return []operation{{
		// Like meters: a repeat of a key answers 201 with the existing feature.
		pattern: "POST /v1/features", class: ratelimit.ClassCatalog, status: http.StatusCreated,
		doc: apispec.Operation{ID: "createFeature", Tag: "Entitlements", Summary: "Create a feature",
			Doc:  "Idempotent by key: a repeat returns the existing feature (201 all the same).",
			Body: typeOf[wire.FeatureRequest](), Responses: created[wire.Feature]("The feature."), Errors: invalidErrs()},
		tool: &toolSpec{name: "create_feature", title: "Create a feature", idempotent: true,
			doc: "Creates a feature customers can be entitled to: boolean (on or off) or metered (a meter's usage counts against a granted limit). " +
				"Idempotent by key. A feature must exist before it is granted or checked.",
			in: typeOf[wire.FeatureRequest](), out: typeOf[wire.Feature]()},
		run: func(s *Server, c *call) (any, error) {
			in, err := features.Decode(c.args)
			if err != nil {
				return nil, err
			}
			f, _, err := features.Create(c.ctx, c.q(s), c.p.Scope, in, s.now(c.p))
			return wireOf(f, err, features.Feature.Wire)
		},
	}}
}
