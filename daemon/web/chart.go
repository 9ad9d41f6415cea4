package web

import (
	"html/template"
	"math"
	"strconv"
	"strings"
)

// Chart is a bar chart drawn on the server as inline SVG: no script, no
// stylesheet beyond presentation attributes (allowed by the page's
// policy), and it scales to the width of a phone. Values are exact
// decimals as text; they become floats only to place the bars.
type Chart struct {
	// Label is the chart's accessible name ("API calls per day, 1–30 Nov").
	Label string
	// Unit follows values in the bars' titles ("calls", "USDC").
	Unit string
	Bars []Bar
}

// Bar is one bar: its axis label and its exact value.
type Bar struct {
	Label, Value string
}

// The chart's drawing box; the SVG scales to its container.
const (
	chartW, chartH         = 640, 220
	padLeft, padRight      = 64, 8
	padTop, padBottom      = 12, 28
	plotW                  = chartW - padLeft - padRight
	plotH                  = chartH - padTop - padBottom
	barColor, axisColor    = "#1a47a0", "#9aa1ab"
	textColor, fontSizeSVG = "#33373d", "12"
)

// SVG renders the chart. An empty chart is an empty frame with its label.
func (c Chart) SVG() template.HTML {
	var b strings.Builder
	esc := template.HTMLEscapeString
	b.WriteString(`<svg viewBox="0 0 ` + itoa(chartW) + ` ` + itoa(chartH) +
		`" role="img" aria-label="` + esc(c.Label) + `" font-family="system-ui,sans-serif" font-size="` + fontSizeSVG + `">`)
	b.WriteString(`<title>` + esc(c.Label) + `</title>`)
	peak := 0.0
	values := make([]float64, len(c.Bars))
	for i, bar := range c.Bars {
		v, err := strconv.ParseFloat(bar.Value, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			v = 0
		}
		values[i] = v
		peak = math.Max(peak, v)
	}
	top := niceCeil(peak)
	base := padTop + plotH
	// Axis and the top gridline with their values.
	line(&b, padLeft, base, chartW-padRight, base, axisColor)
	line(&b, padLeft, padTop, chartW-padRight, padTop, "#e2e5ea")
	label(&b, padLeft-6, base+4, "end", "0")
	label(&b, padLeft-6, padTop+4, "end", formatTick(top))
	if n := len(c.Bars); n > 0 {
		slot := float64(plotW) / float64(n)
		w := math.Max(slot*0.7, 1)
		for i, bar := range c.Bars {
			h := 0.0
			if top > 0 {
				h = values[i] / top * plotH
			}
			x := float64(padLeft) + slot*float64(i) + (slot-w)/2
			b.WriteString(`<rect x="` + ftoa(x) + `" y="` + ftoa(float64(base)-h) + `" width="` + ftoa(w) + `" height="` + ftoa(h) +
				`" fill="` + barColor + `"><title>` + esc(bar.Label+": "+bar.Value+unitSuffix(c.Unit)) + `</title></rect>`)
		}
		// Labels under the first, middle and last bars: enough to read the
		// span at any width without overlapping.
		for _, i := range labelled(n) {
			x := float64(padLeft) + slot*float64(i) + slot/2
			anchor := "middle"
			if n > 1 && i == 0 {
				anchor, x = "start", float64(padLeft)
			} else if n > 1 && i == n-1 {
				anchor, x = "end", float64(chartW-padRight)
			}
			label(&b, int(x), chartH-8, anchor, c.Bars[i].Label)
		}
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) // #nosec: every text above is escaped
}

func labelled(n int) []int {
	switch {
	case n <= 0:
		return nil
	case n == 1:
		return []int{0}
	case n == 2:
		return []int{0, 1}
	}
	return []int{0, n / 2, n - 1}
}

func line(b *strings.Builder, x1, y1, x2, y2 int, color string) {
	b.WriteString(`<line x1="` + itoa(x1) + `" y1="` + itoa(y1) + `" x2="` + itoa(x2) + `" y2="` + itoa(y2) + `" stroke="` + color + `" stroke-width="1"/>`)
}

func label(b *strings.Builder, x, y int, anchor, text string) {
	b.WriteString(`<text x="` + itoa(x) + `" y="` + itoa(y) + `" text-anchor="` + anchor + `" fill="` + textColor + `">` +
		template.HTMLEscapeString(text) + `</text>`)
}

func unitSuffix(u string) string {
	if u == "" {
		return ""
	}
	return " " + u
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten, so the axis's
// top reads cleanly.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 0
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

func formatTick(v float64) string {
	switch {
	case v >= 1e9:
		return strconv.FormatFloat(v/1e9, 'f', -1, 64) + "G"
	case v >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', -1, 64) + "M"
	case v >= 1e4:
		return strconv.FormatFloat(v/1e3, 'f', -1, 64) + "k"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

func itoa(i int) string     { return strconv.Itoa(i) }
func ftoa(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) }
