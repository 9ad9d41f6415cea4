package audit

import "github.com/tollgatehq/tollgate/internal/tenant"

// The actions of changes that both the dashboard and the admin commands
// make: one name per change wherever it is made. Users' own actions are
// named in package users.
const (
	MerchantCreate         = "merchant.create"
	MerchantRename         = "merchant.rename"
	KeyCreate              = "api_key.create"
	KeyRevoke              = "api_key.revoke"
	EndpointCreate         = "webhook_endpoint.create"
	EndpointRemove         = "webhook_endpoint.remove"
	EndpointDisable        = "webhook_endpoint.disable"
	EndpointEnable         = "webhook_endpoint.enable"
	EndpointRotate         = "webhook_endpoint.rotate_secret"
	DeliveryRetry          = "webhook_delivery.retry"
	EntitlementGrantRevoke = "entitlement_grant.revoke"
	OAuthClientRevoke      = "oauth_client.revoke"
	OAuthGrantRevoke       = "oauth_grant.revoke"
	WalletChallenge        = "wallet.challenge"
	WalletSet              = "wallet.set"
	RefundCreate           = "refund.create"
	ArchiveWrite           = "archive.write"
)

// RefundEntry is the entry of a refund of amount (USDC) of paymentID.
func RefundEntry(merchantID string, mode tenant.Mode, refundID, paymentID, amountUSDC string, reason *string) Entry {
	detail := paymentID + ": " + amountUSDC + " USDC"
	if reason != nil && *reason != "" {
		detail += " (" + *reason + ")"
	}
	return Entry{MerchantID: merchantID, Mode: mode, Action: RefundCreate, Target: refundID, Detail: detail}
}
