// Package web is the daemon's layer for pages people use in a browser: the
// customer portal and the merchant dashboard (the hosted checkout shares
// its headers and policy). Pages are rendered on the server from one
// layout with one inline stylesheet, allowed by its hash in the
// Content-Security-Policy; they load nothing from elsewhere and need no
// script (a page that needs one allows exactly its hash). Forms are POST
// with a token bound to the browser's session (CSRF), and cross-origin
// posts are refused outright. Charts are SVG drawn here.
//
// Sessions themselves (their tokens and what they may open) belong to the
// domain packages (internal/portal); their tokens come from id.Token and
// are stored as id.HashToken's digest.
package web

import (
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strings"
)

// Hash is the CSP source expression allowing exactly content as an inline
// <style> or <script>: 'sha256-…'.
func Hash(content []byte) string {
	sum := sha256.Sum256(content)
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// InlineStyle is the content of a page's one <style> element; it panics
// when there is none (a bug in an embedded page).
func InlineStyle(page string) string {
	start := strings.Index(page, "<style>")
	end := strings.Index(page, "</style>")
	if start < 0 || end < start {
		panic("web: page has no <style> element")
	}
	return page[start+len("<style>") : end]
}

// Policy is a Content-Security-Policy that allows nothing but the page's
// own inline style and scripts (by hash), forms posting to this origin,
// and fetches to it when a script is allowed. frame-ancestors 'none' keeps
// every page out of frames (clickjacking).
func Policy(styleHash string, scriptHashes ...string) string {
	p := "default-src 'none'; style-src " + styleHash
	if len(scriptHashes) > 0 {
		p += "; script-src " + strings.Join(scriptHashes, " ") + "; connect-src 'self'"
	}
	return p + "; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
}

// SetHeaders gives an answer the headers every page carries: its policy,
// no caching anywhere (pages show a customer's or merchant's data, and a
// link's secret is in their address), no framing, no sniffing and no
// referrer (which would carry the address's secret to another site).
func SetHeaders(h http.Header, policy string) {
	h.Set("Content-Security-Policy", policy)
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
}
