// Package client is the typed Go client for tollgate's REST API (/v1). The
// tollgate CLI and terminal UI use it, and merchants can import it into their
// own Go services. It has its own wire types and depends on nothing inside
// the tollgate module.
//
// Usage:
//
//	c := client.New("http://127.0.0.1:8080", os.Getenv("TOLLGATE_API_KEY"))
//	inv, err := c.CreateInvoice(ctx, client.InvoiceParams{
//		Amount:      "9000000", // 9.00 USDC in base units
//		Description: "Consulting, November",
//	})
//	if err != nil {
//		var apiErr *client.Error
//		if errors.As(err, &apiErr) && apiErr.Code == client.CodeInvalidRequest {
//			// apiErr.Message names the offending field
//		}
//		return err
//	}
//	fmt.Println(inv.CheckoutURL)
//
//	// Walk every invoice, newest first, 100 per request.
//	for inv, err := range client.All(ctx, c.ListInvoices, client.ListParams{Limit: 100}) {
//		if err != nil {
//			return err
//		}
//		fmt.Println(inv.ID, inv.Amount)
//	}
//
// Every non-2xx response is returned as an *Error. Requests rejected with
// 429 are retried after the server's retry-after interval, as are requests
// that never reached the server (connection refused). A 503, or a
// connection lost after sending, is retried only when repeating the request
// cannot do the work twice: GETs, and API POSTs, which all carry an
// idempotency key (Pay, a customer's action, is never retried). An API POST
// without one of its own (the IdempotencyKey call option, or an
// idempotency_key field in the body) gets an Idempotency-Key header made
// for that call and sent unchanged on each of its retries, so a request the
// server committed before failing is answered, not done again. Retries are
// silent unless WithRetryNotify asks to hear of them. Every returned object
// keeps the exact JSON the API sent in its Raw field.
package client
