package webhook_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/tollgatehq/tollgate/client/webhook"
)

// webhookHandler verifies each delivery against the raw body before decoding
// any JSON. secret is the endpoint's signing secret, "whsec_" prefix included.
func webhookHandler(secret string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
		if err != nil {
			http.Error(w, "cannot read body", http.StatusRequestEntityTooLarge)
			return
		}
		err = webhook.Verify(body, r.Header.Get(webhook.HeaderName), secret, webhook.DefaultTolerance)
		if err != nil {
			if errors.Is(err, webhook.ErrOutsideTolerance) {
				log.Printf("stale delivery (check the clock): %v", err)
			}
			http.Error(w, "invalid signature", http.StatusBadRequest)
			return
		}
		var event struct {
			ID   string `json:"id"`
			Type string `json:"type"`
		}
		if err := json.Unmarshal(body, &event); err != nil {
			http.Error(w, "invalid JSON", http.StatusBadRequest)
			return
		}
		// Deliveries may repeat: record event.ID and skip ones already seen.
		fmt.Printf("received %s %s\n", event.Type, event.ID)
		w.WriteHeader(http.StatusNoContent) // any 2xx acknowledges
	})
}

func Example() {
	const secret = "whsec_example_secret"
	handler := webhookHandler(secret)

	deliver := func(payload, signature string) int {
		req := httptest.NewRequest(http.MethodPost, "/webhooks/tollgate", strings.NewReader(payload))
		req.Header.Set(webhook.HeaderName, signature)
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		return rec.Code
	}

	payload := `{"id":"evt_1","type":"invoice.paid","created_at":"2026-07-01T12:00:00Z","data":{}}`
	good := webhook.Sign([]byte(payload), time.Now(), secret)
	fmt.Println("genuine:", deliver(payload, good))
	fmt.Println("tampered:", deliver(strings.Replace(payload, "evt_1", "evt_2", 1), good))
	fmt.Println("wrong secret:", deliver(payload, webhook.Sign([]byte(payload), time.Now(), "whsec_guess")))
	// Output:
	// received invoice.paid evt_1
	// genuine: 204
	// tampered: 400
	// wrong secret: 400
}

func ExampleSign() {
	payload := []byte(`{"id":"evt_1"}`)
	at := time.Unix(1782907200, 0)
	fmt.Println(webhook.Sign(payload, at, "whsec_old", "whsec_new"))
	// Output:
	// t=1782907200,v1=bfab20f90d1b42b41246b2e7e558aba8ae1ed21242bf6b30656ae254f8be7a59,v1=f8485fbfde777a7291b996fde561d495edb30264c4774403f0afbbcbb16a4566
}

func ExampleVerifyAt() {
	payload := []byte(`{"id":"evt_1"}`)
	at := time.Unix(1782907200, 0)
	header := webhook.Sign(payload, at, "whsec_new")

	fmt.Println(webhook.VerifyAt(payload, header, "whsec_new", webhook.DefaultTolerance, at.Add(time.Minute)))
	fmt.Println(webhook.VerifyAt(payload, header, "whsec_old", webhook.DefaultTolerance, at.Add(time.Minute)))
	fmt.Println(webhook.VerifyAt(payload, header, "whsec_new", webhook.DefaultTolerance, at.Add(7*time.Minute+3*time.Second)))
	// Output:
	// <nil>
	// webhook: signature mismatch
	// webhook: timestamp outside tolerance: 7m3s too old (tolerance 5m0s)
}
