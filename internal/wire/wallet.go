package wire

// SettlementWallet is where a merchant's payments in one mode go (`admin
// wallet show --json`; not part of the REST API: the wallet is never read or
// set over it).
type SettlementWallet struct {
	Object     string `json:"object"` // "settlement_wallet"
	MerchantID string `json:"merchant_id"`
	Mode       string `json:"mode"`
	Address    string `json:"address"`
	// Source is "verified" (set with the wallet's signature) or
	// "generated" (test mode's derived wallet, no one holds its key).
	Source     string           `json:"source"`
	VerifiedAt *string          `json:"verified_at"`
	Previous   []PreviousWallet `json:"previous"`
	Livemode   bool             `json:"livemode"`
}

// PreviousWallet is a settlement wallet that was replaced.
type PreviousWallet struct {
	Address    string  `json:"address"`
	VerifiedAt string  `json:"verified_at"`
	ReplacedAt *string `json:"replaced_at"`
}

// WalletChallenge is the message a wallet signs to become the settlement
// wallet (`admin wallet challenge --json`).
type WalletChallenge struct {
	Object     string `json:"object"` // "wallet_challenge"
	ID         string `json:"id"`
	MerchantID string `json:"merchant_id"`
	Mode       string `json:"mode"`
	Address    string `json:"address"`
	Message    string `json:"message"`
	IssuedAt   string `json:"issued_at"`
	ExpiresAt  string `json:"expires_at"`
	Livemode   bool   `json:"livemode"`
}
