// Code generated via abigen V2 - DO NOT EDIT.
// This file is a generated binding and any manual changes will be lost.

package contracts

import (
	"bytes"
	"errors"
	"math/big"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
)

// Reference imports to suppress errors if they are not otherwise used.
var (
	_ = bytes.Equal
	_ = errors.New
	_ = big.NewInt
	_ = common.Big1
	_ = types.BloomLookup
	_ = abi.ConvertType
)

// FalseTokenMetaData contains all meta data concerning the FalseToken contract.
var FalseTokenMetaData = bind.MetaData{
	ABI: "[{\"inputs\":[{\"internalType\":\"address\",\"name\":\"\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"\",\"type\":\"address\"}],\"name\":\"allowance\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"\",\"type\":\"uint256\"}],\"stateMutability\":\"pure\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"\",\"type\":\"address\"},{\"internalType\":\"uint256\",\"name\":\"\",\"type\":\"uint256\"}],\"name\":\"transferFrom\",\"outputs\":[{\"internalType\":\"bool\",\"name\":\"\",\"type\":\"bool\"}],\"stateMutability\":\"pure\",\"type\":\"function\"}]",
	ID:  "FalseToken",
	Bin: "0x6080604052348015600e575f5ffd5b5060f68061001b5f395ff3fe6080604052348015600e575f5ffd5b50600436106030575f3560e01c806323b872dd146034578063dd62ed3e14605c575b5f5ffd5b6047603f3660046096565b5f9392505050565b60405190151581526020015b60405180910390f35b606f606736600460ca565b5f1992915050565b6040519081526020016053565b80356001600160a01b03811681146091575f5ffd5b919050565b5f5f5f6060848603121560a7575f5ffd5b60ae84607c565b925060ba60208501607c565b9150604084013590509250925092565b5f5f6040838503121560da575f5ffd5b60e183607c565b915060ed60208401607c565b9050925092905056",
}

// FalseToken is an auto generated Go binding around an Ethereum contract.
type FalseToken struct {
	abi abi.ABI
}

// GetABI returns the ABI associated with this contract binding.
func (c *FalseToken) GetABI() abi.ABI {
	return c.abi
}

// NewFalseToken creates a new instance of FalseToken.
func NewFalseToken() *FalseToken {
	parsed, err := FalseTokenMetaData.ParseABI()
	if err != nil {
		panic(errors.New("invalid ABI: " + err.Error()))
	}
	return &FalseToken{abi: *parsed}
}

// Instance creates a wrapper for a deployed contract instance at the given address.
// Use this to create the instance object passed to abigen v2 library functions Call, Transact, etc.
func (c *FalseToken) Instance(backend bind.ContractBackend, addr common.Address) *bind.BoundContract {
	return bind.NewBoundContract(addr, c.abi, backend, backend, backend)
}

// PackAllowance is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xdd62ed3e.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function allowance(address , address ) pure returns(uint256)
func (falseToken *FalseToken) PackAllowance(arg0 common.Address, arg1 common.Address) []byte {
	enc, err := falseToken.abi.Pack("allowance", arg0, arg1)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackAllowance is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xdd62ed3e.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function allowance(address , address ) pure returns(uint256)
func (falseToken *FalseToken) TryPackAllowance(arg0 common.Address, arg1 common.Address) ([]byte, error) {
	return falseToken.abi.Pack("allowance", arg0, arg1)
}

// UnpackAllowance is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xdd62ed3e.
//
// Solidity: function allowance(address , address ) pure returns(uint256)
func (falseToken *FalseToken) UnpackAllowance(data []byte) (*big.Int, error) {
	out, err := falseToken.abi.Unpack("allowance", data)
	if err != nil {
		return new(big.Int), err
	}
	out0 := abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	return out0, nil
}

// PackTransferFrom is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x23b872dd.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function transferFrom(address , address , uint256 ) pure returns(bool)
func (falseToken *FalseToken) PackTransferFrom(arg0 common.Address, arg1 common.Address, arg2 *big.Int) []byte {
	enc, err := falseToken.abi.Pack("transferFrom", arg0, arg1, arg2)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackTransferFrom is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x23b872dd.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function transferFrom(address , address , uint256 ) pure returns(bool)
func (falseToken *FalseToken) TryPackTransferFrom(arg0 common.Address, arg1 common.Address, arg2 *big.Int) ([]byte, error) {
	return falseToken.abi.Pack("transferFrom", arg0, arg1, arg2)
}

// UnpackTransferFrom is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x23b872dd.
//
// Solidity: function transferFrom(address , address , uint256 ) pure returns(bool)
func (falseToken *FalseToken) UnpackTransferFrom(data []byte) (bool, error) {
	out, err := falseToken.abi.Unpack("transferFrom", data)
	if err != nil {
		return *new(bool), err
	}
	out0 := *abi.ConvertType(out[0], new(bool)).(*bool)
	return out0, nil
}
