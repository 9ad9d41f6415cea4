package events

// The event types (the webhooks guide lists them). Every event's data is the
// wire JSON (package wire) of the object it is about, after the change.
const (
	InvoicePaid                  = "invoice.paid"
	RefundSucceeded              = "refund.succeeded"
	SubscriptionActive           = "subscription.active"
	SubscriptionRenewed          = "subscription.renewed"
	SubscriptionPaymentFailed    = "subscription.payment_failed"
	SubscriptionDunningExhausted = "subscription.dunning_exhausted"
	SubscriptionRevoked          = "subscription.revoked"
	SubscriptionExpired          = "subscription.expired"
	SubscriptionUpdated          = "subscription.updated"
	SubscriptionTrialWillEnd     = "subscription.trial_will_end"
	CreditGranted                = "credit.granted"
	CreditDebited                = "credit.debited"
	EntitlementGranted           = "entitlement.granted"
	MeterEventCancelled          = "meter_event.cancelled"
	AlertTriggered               = "alert.triggered"
)

// Types returns every event type, in a fixed order.
func Types() []string {
	return []string{
		InvoicePaid, RefundSucceeded, SubscriptionActive, SubscriptionRenewed, SubscriptionPaymentFailed,
		SubscriptionDunningExhausted, SubscriptionRevoked, SubscriptionExpired, SubscriptionUpdated, SubscriptionTrialWillEnd, CreditGranted, CreditDebited,
		EntitlementGranted, MeterEventCancelled, AlertTriggered,
	}
}
