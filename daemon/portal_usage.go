package daemon

import (
	"context"
	"net/http"
	"time"

	"github.com/tollgatehq/tollgate/daemon/web"
	"github.com/tollgatehq/tollgate/internal/metering"
	"github.com/tollgatehq/tollgate/internal/portal"
)

// usageView is the usage page's body: one chart per meter.
type usageView struct{ Meters []meterUsage }

type meterUsage struct {
	ID, Name, Total, Unit, Span string
	Chart                       web.Chart
	Rows                        []web.Bar
}

// portalUsage serves the usage page: each meter's usage in the current
// period (or the last 30 days without a subscription on it), by day, from
// the usage summaries the API answers.
func (s *Server) portalUsage(w http.ResponseWriter, r *http.Request) {
	pr, ok := s.openPortal(w, r)
	if !ok {
		return
	}
	var v usageView
	var err error
	if v.Meters, err = s.meterUsages(r.Context(), pr.Open); err != nil {
		s.portalFailure(w, r, err)
		return
	}
	f := pr.frame("Usage", "Usage")
	f.Body = v
	s.renderPortal(w, r, http.StatusOK, portalUsagePage, f)
}

// meterUsages is each meter's usage by day of the customer o opens, as the
// portal's usage page and the merchant dashboard's customer page chart it.
func (s *Server) meterUsages(ctx context.Context, o portal.Open) ([]meterUsage, error) {
	ids, err := portal.Meters(ctx, s.db, o)
	if err != nil {
		return nil, err
	}
	var ms []meterUsage
	for _, id := range ids {
		u, err := metering.Usage(ctx, s.db, o.Scope(), o.CustomerID, metering.UsageInput{Meter: id, Window: metering.Day}, o.Now)
		if err != nil {
			return nil, err
		}
		ms = append(ms, meterUsageOf(u))
	}
	return ms, nil
}

func meterUsageOf(u metering.Summary) meterUsage {
	m := meterUsage{ID: u.Meter.ID, Name: u.Meter.DisplayName, Total: u.Value, Span: day(u.From) + " – " + day(u.To.Add(-time.Microsecond))}
	if m.Name == "" {
		m.Name = u.Meter.Key
	}
	if u.Meter.UnitLabel != nil {
		m.Unit = *u.Meter.UnitLabel
	}
	for _, w := range u.Windows {
		m.Rows = append(m.Rows, web.Bar{Label: w.Start.UTC().Format("2 Jan"), Value: w.Value})
	}
	m.Chart = web.Chart{Label: m.Name + " per day, " + m.Span, Unit: m.Unit, Bars: m.Rows}
	return m
}
