// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.37;

/// @title FalseToken
/// @notice A test token whose transferFrom returns false instead of
/// reverting (as some ERC-20s do), so PlanManager's check of the return
/// value is exercised. Every allowance is unlimited.
contract FalseToken {
    function allowance(address, address) external pure returns (uint256) {
        return type(uint256).max;
    }

    function transferFrom(address, address, uint256) external pure returns (bool) {
        return false;
    }
}
