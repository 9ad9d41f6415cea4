package cmd

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/tollgatehq/tollgate/client"
)

// A count meter counts events and ignores their values, yet the API stores
// and echoes a value sent to one, so `meter send --value 1200` said "Value:
// 1200" and billed 1. These warnings say so. They cost a meter lookup, made
// only when some event carried a value other than 1, and for one event only
// when a person reads stderr: a script sending events one by one in a loop
// does not spend its list budget on a warning nobody sees.

// countedValues tallies, per meter, the accepted events whose value was not 1.
type countedValues map[string]int

func (cv countedValues) add(e *client.MeterEvent) {
	if e != nil && !e.Deduplicated && e.Value != "" && e.Value != "1" {
		cv[e.Meter]++
	}
}

// warnCountMeters prints one warning line per count meter in cv.
func warnCountMeters(ctx context.Context, w io.Writer, c *client.Client, cv countedValues, single *client.MeterEvent) {
	if len(cv) == 0 {
		return
	}
	counts := countMeters(ctx, c, cv)
	for _, key := range counts {
		if single != nil {
			fmt.Fprintf(w, "tollgate: warning: %s is a count meter: it counts events, not values, so this event counts 1, not %s; bill by value with a sum meter\n",
				clean(key), clean(single.Value))
			continue
		}
		fmt.Fprintf(w, "tollgate: warning: %s is a count meter: it counts events, not values, so its %d events with other values each count 1; bill by value with a sum meter\n",
			clean(key), cv[key])
	}
}

// countMeters returns which of cv's meters aggregate by count, sorted. A
// failed lookup finds none: the warning is a courtesy, not worth an error.
func countMeters(ctx context.Context, c *client.Client, cv countedValues) []string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var found []string
	seen := 0
	for page, err := range client.Pages(ctx, c.ListMeters, client.ListParams{Limit: 100}) {
		if err != nil {
			break
		}
		for _, m := range page.Data {
			if _, ok := cv[m.Key]; ok {
				seen++
				if strings.EqualFold(m.Aggregation, client.AggregationCount) {
					found = append(found, m.Key)
				}
			}
		}
		if seen == len(cv) {
			break
		}
	}
	slices.Sort(found)
	return found
}
