package daemon

import (
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
	ids, err := portal.Meters(r.Context(), s.db, pr.Open)
	if err != nil {
		s.portalFailure(w, r, err)
		return
	}
	var v usageView
	for _, id := range ids {
		u, err := metering.Usage(r.Context(), s.db, pr.Scope(), pr.CustomerID, metering.UsageInput{Meter: id, Window: metering.Day}, pr.Now)
		if err != nil {
			s.portalFailure(w, r, err)
			return
		}
		v.Meters = append(v.Meters, meterUsageOf(u))
	}
	f := pr.frame("Usage", "Usage")
	f.Body = v
	s.renderPortal(w, r, http.StatusOK, portalUsagePage, f)
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
