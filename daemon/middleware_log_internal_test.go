package daemon

import (
	"bytes"
	"context"
	"log/slog"
	"testing"
	"time"
)

// The request line logged without the caller's program counter is the
// line LogAttrs writes, level filtering included.
func TestLogRequestMatchesLogAttrs(t *testing.T) {
	t.Parallel()
	noTime := func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}
	attrs := []slog.Attr{slog.String("request_id", "req_x"), slog.String("method", "POST"), slog.String("path", "/v1/a b"),
		slog.String("route", "POST /v1/credit_grants"), slog.Int("status", 201), slog.Int64("bytes", 180),
		slog.Duration("duration", 1234567*time.Nanosecond), slog.String("remote", "127.0.0.1:5555")}
	for _, json := range []bool{false, true} {
		for _, level := range []slog.Level{slog.LevelInfo, slog.LevelError, slog.LevelDebug} {
			var want, got bytes.Buffer
			opts := &slog.HandlerOptions{ReplaceAttr: noTime}
			newHandler := func(b *bytes.Buffer) slog.Handler {
				if json {
					return slog.NewJSONHandler(b, opts)
				}
				return slog.NewTextHandler(b, opts)
			}
			slog.New(newHandler(&want)).LogAttrs(context.Background(), level, "request", attrs...)
			logRequest(context.Background(), newHandler(&got), level, "request", attrs...)
			if got.String() != want.String() {
				t.Fatalf("json %v, level %v:\n got %q\nwant %q", json, level, got.String(), want.String())
			}
			if level != slog.LevelDebug && got.Len() == 0 {
				t.Fatalf("json %v, level %v: nothing logged", json, level)
			}
		}
	}
}
