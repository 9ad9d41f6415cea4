// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.37;

import {SignatureChecker} from "./SignatureChecker.sol";

/// @title TestWallet
/// @notice A minimal ERC-1271 smart-contract wallet for tests: a signature is
/// valid when its owner key signed the digest.
contract TestWallet {
    address public owner;

    constructor(address walletOwner) {
        owner = walletOwner;
    }

    function isValidSignature(bytes32 digest, bytes calldata signature) external view returns (bytes4) {
        if (SignatureChecker.recover(digest, signature) == owner && owner != address(0)) {
            return 0x1626ba7e;
        }
        return 0xffffffff;
    }

    /// @notice Lets the owner make the wallet act (approve, revoke, ...).
    function execute(address target, bytes calldata data) external returns (bytes memory) {
        require(msg.sender == owner, "TestWallet: caller is not the owner");
        (bool ok, bytes memory ret) = target.call(data);
        require(ok, "TestWallet: call failed");
        return ret;
    }
}
