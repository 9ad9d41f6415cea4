// Two independent EIP-712 signers over typed data exactly as tollgate
// serves it to a wallet's eth_signTypedData_v4 (types, primaryType, domain,
// message). Neither is told anything tollgate-specific: what one refuses, a
// real wallet built on it refuses too.
import { Wallet, getBytes } from "ethers";
import { privateKeyToAccount } from "viem/accounts";

export const signers = {
  // ethers derives the domain's type from the domain object itself and
  // takes the other types without EIP712Domain, as wallets built on it do.
  ethers: async (key, typed) => {
    const { EIP712Domain, ...types } = typed.types;
    return new Wallet(key).signTypedData(typed.domain, types, typed.message);
  },
  viem: async (key, typed) =>
    privateKeyToAccount(key).signTypedData({
      domain: typed.domain,
      types: typed.types,
      primaryType: typed.primaryType,
      message: typed.message,
    }),
};

// personal signs an EIP-191 personal message (hex bytes, as personal_sign
// receives it), as the dashboard's wallet change asks.
export const personal = async (key, hexMessage) => new Wallet(key).signMessage(getBytes(hexMessage));
