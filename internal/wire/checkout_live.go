package wire

// CheckoutAuthorization answers POST /checkout/{id}/authorization (live
// mode): the payer's signed authorization was verified and submitted.
// Status is pending until the transaction has its confirmations (the
// settlement worker then records the payment or the subscription), or
// succeeded with the payment or subscription when the rail answered at once.
type CheckoutAuthorization struct {
	Object       string        `json:"object"`
	Status       string        `json:"status"`
	ReceiptURL   string        `json:"receipt_url"`
	Payment      *Payment      `json:"payment,omitempty"`
	Subscription *Subscription `json:"subscription,omitempty"`
}
