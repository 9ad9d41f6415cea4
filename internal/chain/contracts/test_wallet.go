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

// TestWalletMetaData contains all meta data concerning the TestWallet contract.
var TestWalletMetaData = bind.MetaData{
	ABI: "[{\"inputs\":[{\"internalType\":\"address\",\"name\":\"walletOwner\",\"type\":\"address\"}],\"stateMutability\":\"nonpayable\",\"type\":\"constructor\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"target\",\"type\":\"address\"},{\"internalType\":\"bytes\",\"name\":\"data\",\"type\":\"bytes\"}],\"name\":\"execute\",\"outputs\":[{\"internalType\":\"bytes\",\"name\":\"\",\"type\":\"bytes\"}],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"digest\",\"type\":\"bytes32\"},{\"internalType\":\"bytes\",\"name\":\"signature\",\"type\":\"bytes\"}],\"name\":\"isValidSignature\",\"outputs\":[{\"internalType\":\"bytes4\",\"name\":\"\",\"type\":\"bytes4\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"owner\",\"outputs\":[{\"internalType\":\"address\",\"name\":\"\",\"type\":\"address\"}],\"stateMutability\":\"view\",\"type\":\"function\"}]",
	ID:  "TestWallet",
	Bin: "0x6080604052348015600e575f5ffd5b5060405161052e38038061052e833981016040819052602b91604e565b5f80546001600160a01b0319166001600160a01b03929092169190911790556079565b5f60208284031215605d575f5ffd5b81516001600160a01b03811681146072575f5ffd5b9392505050565b6104a8806100865f395ff3fe608060405234801561000f575f5ffd5b506004361061003f575f3560e01c80631626ba7e146100435780631cff79cd146100745780638da5cb5b14610094575b5f5ffd5b6100566100513660046103b4565b6100be565b6040516001600160e01b031990911681526020015b60405180910390f35b6100876100823660046103fc565b610150565b60405161006b919061043f565b5f546100a6906001600160a01b031681565b6040516001600160a01b03909116815260200161006b565b5f8054604080516020601f86018190048102820181019092528481526001600160a01b039092169161010c9187919087908790819084018382808284375f9201919091525061027292505050565b6001600160a01b031614801561012b57505f546001600160a01b031615155b1561013e5750630b135d3f60e11b610149565b506001600160e01b03195b9392505050565b5f546060906001600160a01b031633146101bd5760405162461bcd60e51b815260206004820152602360248201527f5465737457616c6c65743a2063616c6c6572206973206e6f7420746865206f776044820152623732b960e91b60648201526084015b60405180910390fd5b5f5f856001600160a01b031685856040516101d9929190610474565b5f604051808303815f865af19150503d805f8114610212576040519150601f19603f3d011682016040523d82523d5f602084013e610217565b606091505b5091509150816102695760405162461bcd60e51b815260206004820152601760248201527f5465737457616c6c65743a2063616c6c206661696c656400000000000000000060448201526064016101b4565b95945050505050565b5f815160411461028357505f610369565b6020820151604083015160608401515f1a7f7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a08211156102c7575f9350505050610369565b601b8160ff1610156102e1576102de601b82610483565b90505b8060ff16601b141580156102f957508060ff16601c14155b15610309575f9350505050610369565b604080515f81526020810180835288905260ff831691810191909152606081018490526080810183905260019060a0016020604051602081039080840390855afa158015610359573d5f5f3e3d5ffd5b5050506020604051035193505050505b92915050565b5f5f83601f84011261037f575f5ffd5b50813567ffffffffffffffff811115610396575f5ffd5b6020830191508360208285010111156103ad575f5ffd5b9250929050565b5f5f5f604084860312156103c6575f5ffd5b83359250602084013567ffffffffffffffff8111156103e3575f5ffd5b6103ef8682870161036f565b9497909650939450505050565b5f5f5f6040848603121561040e575f5ffd5b83356001600160a01b0381168114610424575f5ffd5b9250602084013567ffffffffffffffff8111156103e3575f5ffd5b602081525f82518060208401528060208501604085015e5f604082850101526040601f19601f83011684010191505092915050565b818382375f9101908152919050565b60ff818116838216019081111561036957634e487b7160e01b5f52601160045260245ffd",
}

// TestWallet is an auto generated Go binding around an Ethereum contract.
type TestWallet struct {
	abi abi.ABI
}

// GetABI returns the ABI associated with this contract binding.
func (c *TestWallet) GetABI() abi.ABI {
	return c.abi
}

// NewTestWallet creates a new instance of TestWallet.
func NewTestWallet() *TestWallet {
	parsed, err := TestWalletMetaData.ParseABI()
	if err != nil {
		panic(errors.New("invalid ABI: " + err.Error()))
	}
	return &TestWallet{abi: *parsed}
}

// Instance creates a wrapper for a deployed contract instance at the given address.
// Use this to create the instance object passed to abigen v2 library functions Call, Transact, etc.
func (c *TestWallet) Instance(backend bind.ContractBackend, addr common.Address) *bind.BoundContract {
	return bind.NewBoundContract(addr, c.abi, backend, backend, backend)
}

// PackConstructor is the Go binding used to pack the parameters required for
// contract deployment.
//
// Solidity: constructor(address walletOwner) returns()
func (testWallet *TestWallet) PackConstructor(walletOwner common.Address) []byte {
	enc, err := testWallet.abi.Pack("", walletOwner)
	if err != nil {
		panic(err)
	}
	return enc
}

// PackExecute is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x1cff79cd.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function execute(address target, bytes data) returns(bytes)
func (testWallet *TestWallet) PackExecute(target common.Address, data []byte) []byte {
	enc, err := testWallet.abi.Pack("execute", target, data)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackExecute is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x1cff79cd.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function execute(address target, bytes data) returns(bytes)
func (testWallet *TestWallet) TryPackExecute(target common.Address, data []byte) ([]byte, error) {
	return testWallet.abi.Pack("execute", target, data)
}

// UnpackExecute is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x1cff79cd.
//
// Solidity: function execute(address target, bytes data) returns(bytes)
func (testWallet *TestWallet) UnpackExecute(data []byte) ([]byte, error) {
	out, err := testWallet.abi.Unpack("execute", data)
	if err != nil {
		return *new([]byte), err
	}
	out0 := *abi.ConvertType(out[0], new([]byte)).(*[]byte)
	return out0, nil
}

// PackIsValidSignature is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x1626ba7e.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function isValidSignature(bytes32 digest, bytes signature) view returns(bytes4)
func (testWallet *TestWallet) PackIsValidSignature(digest [32]byte, signature []byte) []byte {
	enc, err := testWallet.abi.Pack("isValidSignature", digest, signature)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackIsValidSignature is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x1626ba7e.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function isValidSignature(bytes32 digest, bytes signature) view returns(bytes4)
func (testWallet *TestWallet) TryPackIsValidSignature(digest [32]byte, signature []byte) ([]byte, error) {
	return testWallet.abi.Pack("isValidSignature", digest, signature)
}

// UnpackIsValidSignature is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x1626ba7e.
//
// Solidity: function isValidSignature(bytes32 digest, bytes signature) view returns(bytes4)
func (testWallet *TestWallet) UnpackIsValidSignature(data []byte) ([4]byte, error) {
	out, err := testWallet.abi.Unpack("isValidSignature", data)
	if err != nil {
		return *new([4]byte), err
	}
	out0 := *abi.ConvertType(out[0], new([4]byte)).(*[4]byte)
	return out0, nil
}

// PackOwner is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x8da5cb5b.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function owner() view returns(address)
func (testWallet *TestWallet) PackOwner() []byte {
	enc, err := testWallet.abi.Pack("owner")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackOwner is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x8da5cb5b.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function owner() view returns(address)
func (testWallet *TestWallet) TryPackOwner() ([]byte, error) {
	return testWallet.abi.Pack("owner")
}

// UnpackOwner is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x8da5cb5b.
//
// Solidity: function owner() view returns(address)
func (testWallet *TestWallet) UnpackOwner(data []byte) (common.Address, error) {
	out, err := testWallet.abi.Unpack("owner", data)
	if err != nil {
		return *new(common.Address), err
	}
	out0 := *abi.ConvertType(out[0], new(common.Address)).(*common.Address)
	return out0, nil
}
