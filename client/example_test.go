package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/tollgatehq/tollgate/client"
)

func Example() {
	ctx := context.Background()
	baseURL := startExampleDaemon() // in real use: "http://127.0.0.1:8080"
	c := client.New(baseURL, "sk_test_example")

	inv, err := c.CreateInvoice(ctx, client.InvoiceParams{
		Amount:      "9000000", // 9.00 USDC in base units
		Description: "Consulting, November",
	})
	if err != nil {
		var apiErr *client.Error
		if errors.As(err, &apiErr) {
			log.Fatalf("API error %s: %s", apiErr.Code, apiErr.Message)
		}
		log.Fatal(err)
	}
	fmt.Println(inv.ID, inv.Status, inv.CheckoutURL)

	// Walk every invoice, newest first, fetching pages as needed.
	for inv, err := range client.All(ctx, c.ListInvoices, client.ListParams{Limit: 100}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(inv.ID, inv.Amount)
	}
	// Output:
	// inv_1 open https://pay.example/checkout/inv_1
	// inv_1 9000000
}

// startExampleDaemon stands in for `tollgate serve`.
func startExampleDaemon() string {
	const inv = `{"object":"invoice","id":"inv_1","amount":"9000000","status":"open","checkout_url":"https://pay.example/checkout/inv_1","description":"Consulting, November"}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusCreated)
			fmt.Fprint(w, inv)
			return
		}
		fmt.Fprintf(w, `{"object":"list","data":[%s],"has_more":false,"next_cursor":null}`, inv)
	}))
	return srv.URL
}

// A command-line tool tells its user why a call is taking long.
func ExampleWithRetryNotify() {
	c := client.New("http://127.0.0.1:8080", "sk_test_example", client.WithRetryNotify(func(r client.Retry) {
		if r.RateLimited() {
			log.Printf("rate limited (%s %s); retrying in %s", r.Method, r.Path, r.Wait)
		}
	}))
	_ = c // use c as usual
}
