package daemon

// The delivery queue's timing, for the tests outside the package that
// measure how soon a dead replica's attempts are made again.
const (
	DeliveryLease = deliveryLease
	DeliveryPoll  = deliveryPoll
)
