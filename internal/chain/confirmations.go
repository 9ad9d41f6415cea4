package chain

// DefaultConfirmations is the confirmation depth tollgate waits for on a
// chain when --confirmations is not given: deep enough that a reorg past it
// is not seen in practice on that chain, short enough for checkout.
// Unknown chains get 12.
func DefaultConfirmations(chainID uint64) uint64 {
	switch chainID {
	case 1: // Ethereum: about 2.5 minutes
		return 12
	case 8453, 10, 42161: // Base, OP Mainnet, Arbitrum One: sequencer-ordered L2s
		return 10
	case 137: // Polygon PoS: reorgs of several blocks happen
		return 64
	case 11155111, 84532, 11155420, 421614, 80002: // testnets
		return 3
	case 1337, 31337: // dev chains: geth --dev, the simulated backend, Anvil
		return 1
	}
	return 12
}
