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

// PlanManagerPermit is an auto generated low-level Go binding around an user-defined struct.
type PlanManagerPermit struct {
	Value    *big.Int
	Deadline *big.Int
	V        uint8
	R        [32]byte
	S        [32]byte
}

// PlanManagerPlan is an auto generated low-level Go binding around an user-defined struct.
type PlanManagerPlan struct {
	Payer        common.Address
	Payee        common.Address
	Token        common.Address
	CapPerPeriod *big.Int
	Period       *big.Int
	Start        *big.Int
	End          *big.Int
	Salt         [32]byte
}

// PlanManagerState is an auto generated low-level Go binding around an user-defined struct.
type PlanManagerState struct {
	Status      uint8
	PeriodIndex uint64
	Spent       *big.Int
}

// PlanManagerMetaData contains all meta data concerning the PlanManager contract.
var PlanManagerMetaData = bind.MetaData{
	ABI: "[{\"inputs\":[{\"internalType\":\"address\",\"name\":\"initialOperator\",\"type\":\"address\"}],\"stateMutability\":\"nonpayable\",\"type\":\"constructor\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"address\",\"name\":\"previous\",\"type\":\"address\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"next\",\"type\":\"address\"}],\"name\":\"OperatorChanged\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"planId\",\"type\":\"bytes32\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"payer\",\"type\":\"address\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"payee\",\"type\":\"address\"},{\"indexed\":false,\"internalType\":\"address\",\"name\":\"token\",\"type\":\"address\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"capPerPeriod\",\"type\":\"uint256\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"period\",\"type\":\"uint256\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"start\",\"type\":\"uint256\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"end\",\"type\":\"uint256\"}],\"name\":\"PlanActivated\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"planId\",\"type\":\"bytes32\"},{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"ref\",\"type\":\"bytes32\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"periodIndex\",\"type\":\"uint256\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"spentInPeriod\",\"type\":\"uint256\"}],\"name\":\"PlanCharged\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"planId\",\"type\":\"bytes32\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"payer\",\"type\":\"address\"}],\"name\":\"PlanRevoked\",\"type\":\"event\"},{\"inputs\":[],\"name\":\"DOMAIN_SEPARATOR\",\"outputs\":[{\"internalType\":\"bytes32\",\"name\":\"\",\"type\":\"bytes32\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"PLAN_TYPEHASH\",\"outputs\":[{\"internalType\":\"bytes32\",\"name\":\"\",\"type\":\"bytes32\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"REVOKE_TYPEHASH\",\"outputs\":[{\"internalType\":\"bytes32\",\"name\":\"\",\"type\":\"bytes32\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"components\":[{\"internalType\":\"address\",\"name\":\"payer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"payee\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"token\",\"type\":\"address\"},{\"internalType\":\"uint256\",\"name\":\"capPerPeriod\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"period\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"start\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"end\",\"type\":\"uint256\"},{\"internalType\":\"bytes32\",\"name\":\"salt\",\"type\":\"bytes32\"}],\"internalType\":\"structPlanManager.Plan\",\"name\":\"plan\",\"type\":\"tuple\"},{\"internalType\":\"bytes\",\"name\":\"signature\",\"type\":\"bytes\"},{\"components\":[{\"internalType\":\"uint256\",\"name\":\"value\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"deadline\",\"type\":\"uint256\"},{\"internalType\":\"uint8\",\"name\":\"v\",\"type\":\"uint8\"},{\"internalType\":\"bytes32\",\"name\":\"r\",\"type\":\"bytes32\"},{\"internalType\":\"bytes32\",\"name\":\"s\",\"type\":\"bytes32\"}],\"internalType\":\"structPlanManager.Permit\",\"name\":\"permit\",\"type\":\"tuple\"},{\"internalType\":\"uint256\",\"name\":\"firstCharge\",\"type\":\"uint256\"},{\"internalType\":\"bytes32\",\"name\":\"ref\",\"type\":\"bytes32\"}],\"name\":\"activate\",\"outputs\":[{\"internalType\":\"bytes32\",\"name\":\"id\",\"type\":\"bytes32\"}],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"components\":[{\"internalType\":\"address\",\"name\":\"payer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"payee\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"token\",\"type\":\"address\"},{\"internalType\":\"uint256\",\"name\":\"capPerPeriod\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"period\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"start\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"end\",\"type\":\"uint256\"},{\"internalType\":\"bytes32\",\"name\":\"salt\",\"type\":\"bytes32\"}],\"internalType\":\"structPlanManager.Plan\",\"name\":\"plan\",\"type\":\"tuple\"},{\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"},{\"internalType\":\"bytes32\",\"name\":\"ref\",\"type\":\"bytes32\"}],\"name\":\"charge\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"eip712Domain\",\"outputs\":[{\"internalType\":\"bytes1\",\"name\":\"fields\",\"type\":\"bytes1\"},{\"internalType\":\"string\",\"name\":\"name\",\"type\":\"string\"},{\"internalType\":\"string\",\"name\":\"version\",\"type\":\"string\"},{\"internalType\":\"uint256\",\"name\":\"chainId\",\"type\":\"uint256\"},{\"internalType\":\"address\",\"name\":\"verifyingContract\",\"type\":\"address\"},{\"internalType\":\"bytes32\",\"name\":\"salt\",\"type\":\"bytes32\"},{\"internalType\":\"uint256[]\",\"name\":\"extensions\",\"type\":\"uint256[]\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"operator\",\"outputs\":[{\"internalType\":\"address\",\"name\":\"\",\"type\":\"address\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"components\":[{\"internalType\":\"address\",\"name\":\"payer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"payee\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"token\",\"type\":\"address\"},{\"internalType\":\"uint256\",\"name\":\"capPerPeriod\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"period\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"start\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"end\",\"type\":\"uint256\"},{\"internalType\":\"bytes32\",\"name\":\"salt\",\"type\":\"bytes32\"}],\"internalType\":\"structPlanManager.Plan\",\"name\":\"plan\",\"type\":\"tuple\"}],\"name\":\"planId\",\"outputs\":[{\"internalType\":\"bytes32\",\"name\":\"\",\"type\":\"bytes32\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"id\",\"type\":\"bytes32\"}],\"name\":\"planState\",\"outputs\":[{\"components\":[{\"internalType\":\"enumPlanManager.Status\",\"name\":\"status\",\"type\":\"uint8\"},{\"internalType\":\"uint64\",\"name\":\"periodIndex\",\"type\":\"uint64\"},{\"internalType\":\"uint256\",\"name\":\"spent\",\"type\":\"uint256\"}],\"internalType\":\"structPlanManager.State\",\"name\":\"\",\"type\":\"tuple\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"components\":[{\"internalType\":\"address\",\"name\":\"payer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"payee\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"token\",\"type\":\"address\"},{\"internalType\":\"uint256\",\"name\":\"capPerPeriod\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"period\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"start\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"end\",\"type\":\"uint256\"},{\"internalType\":\"bytes32\",\"name\":\"salt\",\"type\":\"bytes32\"}],\"internalType\":\"structPlanManager.Plan\",\"name\":\"plan\",\"type\":\"tuple\"}],\"name\":\"remaining\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"components\":[{\"internalType\":\"address\",\"name\":\"payer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"payee\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"token\",\"type\":\"address\"},{\"internalType\":\"uint256\",\"name\":\"capPerPeriod\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"period\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"start\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"end\",\"type\":\"uint256\"},{\"internalType\":\"bytes32\",\"name\":\"salt\",\"type\":\"bytes32\"}],\"internalType\":\"structPlanManager.Plan\",\"name\":\"plan\",\"type\":\"tuple\"}],\"name\":\"revoke\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"components\":[{\"internalType\":\"address\",\"name\":\"payer\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"payee\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"token\",\"type\":\"address\"},{\"internalType\":\"uint256\",\"name\":\"capPerPeriod\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"period\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"start\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"end\",\"type\":\"uint256\"},{\"internalType\":\"bytes32\",\"name\":\"salt\",\"type\":\"bytes32\"}],\"internalType\":\"structPlanManager.Plan\",\"name\":\"plan\",\"type\":\"tuple\"},{\"internalType\":\"uint256\",\"name\":\"deadline\",\"type\":\"uint256\"},{\"internalType\":\"bytes\",\"name\":\"signature\",\"type\":\"bytes\"}],\"name\":\"revokeWithSignature\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"next\",\"type\":\"address\"}],\"name\":\"setOperator\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"}]",
	ID:  "PlanManager",
	Bin: "0x608060405234801561000f575f5ffd5b50604051611cb1380380611cb183398101604081905261002e916100d5565b6001600160a01b0381166100885760405162461bcd60e51b815260206004820152601a60248201527f506c616e4d616e616765723a207a65726f206f70657261746f72000000000000604482015260640160405180910390fd5b5f80546001600160a01b0319166001600160a01b03831690811782556040519091907fd58299b712891143e76310d5e664c4203c940a67db37cf856bdaa3c5c76a802c908290a350610102565b5f602082840312156100e5575f5ffd5b81516001600160a01b03811681146100fb575f5ffd5b9392505050565b611ba28061010f5f395ff3fe608060405234801561000f575f5ffd5b50600436106100cb575f3560e01c80638a73222711610088578063a72cee9211610063578063a72cee92146101c4578063b3ab15fb146101d7578063b873d651146101ea578063f0fc539f146101fd575f5ffd5b80638a7322271461016a5780639612228614610191578063a4c625b7146101b1575f5ffd5b80630df88660146100cf5780633644e515146100e4578063570ca735146100ff57806363834565146101295780637dab955a1461013c57806384b0196e1461014f575b5f5ffd5b6100e26100dd366004611740565b610224565b005b6100ec6102c3565b6040519081526020015b60405180910390f35b5f54610111906001600160a01b031681565b6040516001600160a01b0390911681526020016100f6565b6100e261013736600461175b565b610395565b6100ec61014a3660046117d4565b610486565b610157610a86565b6040516100f69796959493929190611886565b6100ec7f9f54f7f992ad9b2f339535ddf4c5f0ed22682ff30010ad773e3775edf3d3cf3081565b6101a461019f36600461191c565b610b2e565b6040516100f69190611947565b6100e26101bf366004611992565b610bb5565b6100ec6101d2366004611740565b610d5c565b6100e26101e53660046119ec565b610e84565b6100ec6101f8366004611740565b610f5c565b6100ec7f04eea1a172ebcd15a162f1dc0844cc50fd964d42ea2178af317560b1e93b1ab681565b61023160208201826119ec565b6001600160a01b0316336001600160a01b0316146102a25760405162461bcd60e51b8152602060048201526024808201527f506c616e4d616e616765723a2063616c6c6572206973206e6f7420746865207060448201526330bcb2b960e11b60648201526084015b60405180910390fd5b6102c06102ae82610d5c565b6102bb60208401846119ec565b61101e565b50565b604080518082018252600b81526a283630b726b0b730b3b2b960a91b6020918201528151808301835260018152603160f81b9082015281517f8b73c3c69bb8fe3d512ecc4cf759cc79239f7b179b0ffacaa9a75d522b39400f818301527f36251d6716db9a629699af5082b05359ac7aaad29bfa4b074ce7d705312c0aed818401527fc89efdaa54c0f20c7adf612882df0950f5a951637e0307cdcb4c672f298b8bc660608201524660808201523060a0808301919091528351808303909101815260c0909101909252815191012090565b5f546001600160a01b031633146103be5760405162461bcd60e51b815260040161029990611a12565b5f6103c884610d5c565b5f8181526001602052604090209091506002815460ff1660028111156103f0576103f0611933565b0361040d5760405162461bcd60e51b815260040161029990611a59565b6001815460ff16600281111561042557610425611933565b146104725760405162461bcd60e51b815260206004820152601c60248201527f506c616e4d616e616765723a20706c616e206e6f7420616374697665000000006044820152606401610299565b61047f85838387876110a5565b5050505050565b5f80546001600160a01b031633146104b05760405162461bcd60e51b815260040161029990611a12565b5f6104be60208901896119ec565b6001600160a01b0316141580156104ed57505f6104e16040890160208a016119ec565b6001600160a01b031614155b6105395760405162461bcd60e51b815260206004820152601960248201527f506c616e4d616e616765723a207a65726f2061646472657373000000000000006044820152606401610299565b5f61054a6060890160408a016119ec565b6001600160a01b03163b116105ad5760405162461bcd60e51b8152602060048201526024808201527f506c616e4d616e616765723a20746f6b656e206973206e6f74206120636f6e746044820152631c9858dd60e21b6064820152608401610299565b5f8760800135116106005760405162461bcd60e51b815260206004820152601860248201527f506c616e4d616e616765723a207a65726f20706572696f6400000000000000006044820152606401610299565b8660a001358760c00135116106575760405162461bcd60e51b815260206004820152601760248201527f506c616e4d616e616765723a20656d707479207465726d0000000000000000006044820152606401610299565b5f8760600135116106a25760405162461bcd60e51b81526020600482015260156024820152740506c616e4d616e616765723a207a65726f2063617605c1b6044820152606401610299565b6106ab87610d5c565b5f8181526001602052604090209091506002815460ff1660028111156106d3576106d3611933565b036106f05760405162461bcd60e51b815260040161029990611a59565b5f815460ff16600281111561070757610707611933565b146107545760405162461bcd60e51b815260206004820181905260248201527f506c616e4d616e616765723a20706c616e20616c7265616479206163746976656044820152606401610299565b6107a061076460208a018a6119ec565b8389898080601f0160208091040260200160405190810160405280939291908181526020018383808284375f920191909152506114f892505050565b6107ec5760405162461bcd60e51b815260206004820152601e60248201527f506c616e4d616e616765723a20696e76616c6964207369676e617475726500006044820152606401610299565b6020850135156108bc576108066060890160408a016119ec565b6001600160a01b031663d505accf61082160208b018b6119ec565b30883560208a013561083960608c0160408d01611a90565b6040516001600160e01b031960e088901b1681526001600160a01b0395861660048201529490931660248501526044840191909152606483015260ff166084820152606088013560a4820152608088013560c482015260e4015f604051808303815f87803b1580156108a9575f5ffd5b505af19250505080156108ba575060015b505b805460ff191660011781556108d76040890160208a016119ec565b6001600160a01b03166108ed60208a018a6119ec565b6001600160a01b0316837f9c1e0bdcd2b730da486f371c6c305e613629ebc614a2da33c6dd33e862e065ab61092860608d0160408e016119ec565b8c606001358d608001358e60a001358f60c001356040516109769594939291906001600160a01b03959095168552602085019390935260408401919091526060830152608082015260a00190565b60405180910390a483156109965761099188838387876110a5565b610a7b565b5f6109a760608a0160408b016119ec565b6001600160a01b031663dd62ed3e6109c260208c018c6119ec565b6040516001600160e01b031960e084901b1681526001600160a01b039091166004820152306024820152604401602060405180830381865afa158015610a0a573d5f5f3e3d5ffd5b505050506040513d601f19601f82011682018060405250810190610a2e9190611ab0565b11610a7b5760405162461bcd60e51b815260206004820152601e60248201527f506c616e4d616e616765723a20616c6c6f77616e6365206973207a65726f00006044820152606401610299565b509695505050505050565b5f6060805f5f5f60606040518060400160405280600b81526020016a283630b726b0b730b3b2b960a91b815250604051806040016040528060018152602001603160f81b81525046305f5f1b5f67ffffffffffffffff811115610aeb57610aeb611ac7565b604051908082528060200260200182016040528015610b14578160200160208202803683370190505b50600f60f81b9d959c50939a509198509650945092509050565b604080516060810182525f80825260208201819052918101919091525f82815260016020526040908190208151606081019092528054829060ff166002811115610b7a57610b7a611933565b6002811115610b8b57610b8b611933565b81528154610100900467ffffffffffffffff16602082015260019091015460409091015292915050565b82421115610c055760405162461bcd60e51b815260206004820152601f60248201527f506c616e4d616e616765723a207265766f636174696f6e2065787069726564006044820152606401610299565b5f610c0f85610d5c565b90505f610c1a6102c3565b604080517f9f54f7f992ad9b2f339535ddf4c5f0ed22682ff30010ad773e3775edf3d3cf3060208201529081018490526060810187905260800160405160208183030381529060405280519060200120604051602001610c9192919061190160f01b81526002810192909252602282015260420190565b60408051601f1981840301815291905280516020918201209150610cf790610cbb908801886119ec565b8286868080601f0160208091040260200160405190810160405280939291908181526020018383808284375f920191909152506114f892505050565b610d435760405162461bcd60e51b815260206004820152601e60248201527f506c616e4d616e616765723a20696e76616c6964207369676e617475726500006044820152606401610299565b610d54826102bb60208901896119ec565b505050505050565b5f807f04eea1a172ebcd15a162f1dc0844cc50fd964d42ea2178af317560b1e93b1ab6610d8c60208501856119ec565b610d9c60408601602087016119ec565b610dac60608701604088016119ec565b866060013587608001358860a001358960c001358a60e00135604051602001610e26999897969594939291909889526001600160a01b0397881660208a01529587166040890152939095166060870152608086019190915260a085015260c084019290925260e08301919091526101008201526101200190565b604051602081830303815290604052805190602001209050610e466102c3565b60405161190160f01b602082015260228101919091526042810182905260620160405160208183030381529060405280519060200120915050919050565b5f546001600160a01b03163314610ead5760405162461bcd60e51b815260040161029990611a12565b6001600160a01b038116610f035760405162461bcd60e51b815260206004820152601a60248201527f506c616e4d616e616765723a207a65726f206f70657261746f720000000000006044820152606401610299565b5f80546040516001600160a01b03808516939216917fd58299b712891143e76310d5e664c4203c940a67db37cf856bdaa3c5c76a802c91a35f80546001600160a01b0319166001600160a01b0392909216919091179055565b5f5f60015f610f6a85610d5c565b815260208101919091526040015f2090506001815460ff166002811115610f9357610f93611933565b141580610fa357508260a0013542105b80610fb257508260c001354210155b15610fbf57505f92915050565b5f6080840135610fd360a086013542611aef565b610fdd9190611b02565b82549091505f90610100900467ffffffffffffffff168214610fff575f611005565b82600101545b9050611015816060870135611aef565b95945050505050565b5f8281526001602052604090206002815460ff16600281111561104357611043611933565b036110605760405162461bcd60e51b815260040161029990611a59565b805460ff191660021781556040516001600160a01b0383169084907fb931bf0e2f2d132d376d433481c1602812bb18e4d1b5280e9dc1c108711d8117905f90a3505050565b5f82116110f45760405162461bcd60e51b815260206004820152601860248201527f506c616e4d616e616765723a207a65726f20616d6f756e7400000000000000006044820152606401610299565b8460a001354210156111485760405162461bcd60e51b815260206004820152601d60248201527f506c616e4d616e616765723a20706c616e206e6f7420737461727465640000006044820152606401610299565b8460c00135421061119b5760405162461bcd60e51b815260206004820152601760248201527f506c616e4d616e616765723a20706c616e20656e6465640000000000000000006044820152606401610299565b5f60808601356111af60a088013542611aef565b6111b99190611b02565b8454909150610100900467ffffffffffffffff1681146111fa57835468ffffffffffffffff00191661010067ffffffffffffffff8316021784555f60018501555b600184015461120d906060880135611aef565b83111561125c5760405162461bcd60e51b815260206004820152601960248201527f506c616e4d616e616765723a20636170206578636565646564000000000000006044820152606401610299565b8261126d60608801604089016119ec565b6001600160a01b031663dd62ed3e61128860208a018a6119ec565b6040516001600160e01b031960e084901b1681526001600160a01b039091166004820152306024820152604401602060405180830381865afa1580156112d0573d5f5f3e3d5ffd5b505050506040513d601f19601f820116820180604052508101906112f49190611ab0565b10156113425760405162461bcd60e51b815260206004820152601e60248201527f506c616e4d616e616765723a20616c6c6f77616e636520746f6f206c6f7700006044820152606401610299565b82846001015f8282546113559190611b21565b909155505f90508061136d6060890160408a016119ec565b6001600160a01b031661138360208a018a6119ec565b61139360408b0160208c016119ec565b6040516001600160a01b039283166024820152911660448201526064810187905260840160408051601f198184030181529181526020820180516001600160e01b03166323b872dd60e01b179052516113ec9190611b34565b5f604051808303815f865af19150503d805f8114611425576040519150601f19603f3d011682016040523d82523d5f602084013e61142a565b606091505b50915091508161143c57805160208201fd5b805115806114595750808060200190518101906114599190611b4a565b6114a55760405162461bcd60e51b815260206004820152601c60248201527f506c616e4d616e616765723a207472616e73666572206661696c6564000000006044820152606401610299565b600186015460408051878152602081018690528082019290925251859189917f903ee14e4dd622e9bb8041acce3f8eb27e54bcf8eebe3201a24978d0f6fa07039181900360600190a35050505050505050565b5f836001600160a01b03163b5f0361154357836001600160a01b031661151e848461162c565b6001600160a01b031614801561153c57506001600160a01b03841615155b9050611625565b5f5f856001600160a01b0316631626ba7e60e01b868660405160240161156a929190611b69565b60408051601f198184030181529181526020820180516001600160e01b03166001600160e01b03199094169390931790925290516115a89190611b34565b5f60405180830381855afa9150503d805f81146115e0576040519150601f19603f3d011682016040523d82523d5f602084013e6115e5565b606091505b50915091508180156115f957506020815110155b801561162057508051630b135d3f60e11b9061161e9083016020908101908401611ab0565b145b925050505b9392505050565b5f815160411461163d57505f611723565b6020820151604083015160608401515f1a7f7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0821115611681575f9350505050611723565b601b8160ff16101561169b57611698601b82611b89565b90505b8060ff16601b141580156116b357508060ff16601c14155b156116c3575f9350505050611723565b604080515f81526020810180835288905260ff831691810191909152606081018490526080810183905260019060a0016020604051602081039080840390855afa158015611713573d5f5f3e3d5ffd5b5050506020604051035193505050505b92915050565b5f610100828403121561173a575f5ffd5b50919050565b5f6101008284031215611751575f5ffd5b6116258383611729565b5f5f5f610140848603121561176e575f5ffd5b6117788585611729565b956101008501359550610120909401359392505050565b5f5f83601f84011261179f575f5ffd5b50813567ffffffffffffffff8111156117b6575f5ffd5b6020830191508360208285010111156117cd575f5ffd5b9250929050565b5f5f5f5f5f5f8688036102008112156117eb575f5ffd5b6117f58989611729565b965061010088013567ffffffffffffffff811115611811575f5ffd5b61181d8a828b0161178f565b90975095505060a061011f1982011215611835575f5ffd5b5094979396509194610120810194506101c0810135936101e09091013592509050565b5f81518084528060208401602086015e5f602082860101526020601f19601f83011685010191505092915050565b60ff60f81b8816815260e060208201525f6118a460e0830189611858565b82810360408401526118b68189611858565b606084018890526001600160a01b038716608085015260a0840186905283810360c0850152845180825260208087019350909101905f5b8181101561190b5783518352602093840193909201916001016118ed565b50909b9a5050505050505050505050565b5f6020828403121561192c575f5ffd5b5035919050565b634e487b7160e01b5f52602160045260245ffd5b815160608201906003811061196a57634e487b7160e01b5f52602160045260245ffd5b8083525067ffffffffffffffff60208401511660208301526040830151604083015292915050565b5f5f5f5f61014085870312156119a6575f5ffd5b6119b08686611729565b9350610100850135925061012085013567ffffffffffffffff8111156119d4575f5ffd5b6119e08782880161178f565b95989497509550505050565b5f602082840312156119fc575f5ffd5b81356001600160a01b0381168114611625575f5ffd5b60208082526027908201527f506c616e4d616e616765723a2063616c6c6572206973206e6f7420746865206f6040820152663832b930ba37b960c91b606082015260800190565b60208082526019908201527f506c616e4d616e616765723a20706c616e207265766f6b656400000000000000604082015260600190565b5f60208284031215611aa0575f5ffd5b813560ff81168114611625575f5ffd5b5f60208284031215611ac0575f5ffd5b5051919050565b634e487b7160e01b5f52604160045260245ffd5b634e487b7160e01b5f52601160045260245ffd5b8181038181111561172357611723611adb565b5f82611b1c57634e487b7160e01b5f52601260045260245ffd5b500490565b8082018082111561172357611723611adb565b5f82518060208501845e5f920191825250919050565b5f60208284031215611b5a575f5ffd5b81518015158114611625575f5ffd5b828152604060208201525f611b816040830184611858565b949350505050565b60ff818116838216019081111561172357611723611adb56",
}

// PlanManager is an auto generated Go binding around an Ethereum contract.
type PlanManager struct {
	abi abi.ABI
}

// GetABI returns the ABI associated with this contract binding.
func (c *PlanManager) GetABI() abi.ABI {
	return c.abi
}

// NewPlanManager creates a new instance of PlanManager.
func NewPlanManager() *PlanManager {
	parsed, err := PlanManagerMetaData.ParseABI()
	if err != nil {
		panic(errors.New("invalid ABI: " + err.Error()))
	}
	return &PlanManager{abi: *parsed}
}

// Instance creates a wrapper for a deployed contract instance at the given address.
// Use this to create the instance object passed to abigen v2 library functions Call, Transact, etc.
func (c *PlanManager) Instance(backend bind.ContractBackend, addr common.Address) *bind.BoundContract {
	return bind.NewBoundContract(addr, c.abi, backend, backend, backend)
}

// PackConstructor is the Go binding used to pack the parameters required for
// contract deployment.
//
// Solidity: constructor(address initialOperator) returns()
func (planManager *PlanManager) PackConstructor(initialOperator common.Address) []byte {
	enc, err := planManager.abi.Pack("", initialOperator)
	if err != nil {
		panic(err)
	}
	return enc
}

// PackDOMAINSEPARATOR is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x3644e515.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function DOMAIN_SEPARATOR() view returns(bytes32)
func (planManager *PlanManager) PackDOMAINSEPARATOR() []byte {
	enc, err := planManager.abi.Pack("DOMAIN_SEPARATOR")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackDOMAINSEPARATOR is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x3644e515.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function DOMAIN_SEPARATOR() view returns(bytes32)
func (planManager *PlanManager) TryPackDOMAINSEPARATOR() ([]byte, error) {
	return planManager.abi.Pack("DOMAIN_SEPARATOR")
}

// UnpackDOMAINSEPARATOR is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x3644e515.
//
// Solidity: function DOMAIN_SEPARATOR() view returns(bytes32)
func (planManager *PlanManager) UnpackDOMAINSEPARATOR(data []byte) ([32]byte, error) {
	out, err := planManager.abi.Unpack("DOMAIN_SEPARATOR", data)
	if err != nil {
		return *new([32]byte), err
	}
	out0 := *abi.ConvertType(out[0], new([32]byte)).(*[32]byte)
	return out0, nil
}

// PackPLANTYPEHASH is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xf0fc539f.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function PLAN_TYPEHASH() view returns(bytes32)
func (planManager *PlanManager) PackPLANTYPEHASH() []byte {
	enc, err := planManager.abi.Pack("PLAN_TYPEHASH")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackPLANTYPEHASH is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xf0fc539f.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function PLAN_TYPEHASH() view returns(bytes32)
func (planManager *PlanManager) TryPackPLANTYPEHASH() ([]byte, error) {
	return planManager.abi.Pack("PLAN_TYPEHASH")
}

// UnpackPLANTYPEHASH is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xf0fc539f.
//
// Solidity: function PLAN_TYPEHASH() view returns(bytes32)
func (planManager *PlanManager) UnpackPLANTYPEHASH(data []byte) ([32]byte, error) {
	out, err := planManager.abi.Unpack("PLAN_TYPEHASH", data)
	if err != nil {
		return *new([32]byte), err
	}
	out0 := *abi.ConvertType(out[0], new([32]byte)).(*[32]byte)
	return out0, nil
}

// PackREVOKETYPEHASH is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x8a732227.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function REVOKE_TYPEHASH() view returns(bytes32)
func (planManager *PlanManager) PackREVOKETYPEHASH() []byte {
	enc, err := planManager.abi.Pack("REVOKE_TYPEHASH")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackREVOKETYPEHASH is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x8a732227.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function REVOKE_TYPEHASH() view returns(bytes32)
func (planManager *PlanManager) TryPackREVOKETYPEHASH() ([]byte, error) {
	return planManager.abi.Pack("REVOKE_TYPEHASH")
}

// UnpackREVOKETYPEHASH is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x8a732227.
//
// Solidity: function REVOKE_TYPEHASH() view returns(bytes32)
func (planManager *PlanManager) UnpackREVOKETYPEHASH(data []byte) ([32]byte, error) {
	out, err := planManager.abi.Unpack("REVOKE_TYPEHASH", data)
	if err != nil {
		return *new([32]byte), err
	}
	out0 := *abi.ConvertType(out[0], new([32]byte)).(*[32]byte)
	return out0, nil
}

// PackActivate is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x7dab955a.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function activate((address,address,address,uint256,uint256,uint256,uint256,bytes32) plan, bytes signature, (uint256,uint256,uint8,bytes32,bytes32) permit, uint256 firstCharge, bytes32 ref) returns(bytes32 id)
func (planManager *PlanManager) PackActivate(plan PlanManagerPlan, signature []byte, permit PlanManagerPermit, firstCharge *big.Int, ref [32]byte) []byte {
	enc, err := planManager.abi.Pack("activate", plan, signature, permit, firstCharge, ref)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackActivate is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x7dab955a.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function activate((address,address,address,uint256,uint256,uint256,uint256,bytes32) plan, bytes signature, (uint256,uint256,uint8,bytes32,bytes32) permit, uint256 firstCharge, bytes32 ref) returns(bytes32 id)
func (planManager *PlanManager) TryPackActivate(plan PlanManagerPlan, signature []byte, permit PlanManagerPermit, firstCharge *big.Int, ref [32]byte) ([]byte, error) {
	return planManager.abi.Pack("activate", plan, signature, permit, firstCharge, ref)
}

// UnpackActivate is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x7dab955a.
//
// Solidity: function activate((address,address,address,uint256,uint256,uint256,uint256,bytes32) plan, bytes signature, (uint256,uint256,uint8,bytes32,bytes32) permit, uint256 firstCharge, bytes32 ref) returns(bytes32 id)
func (planManager *PlanManager) UnpackActivate(data []byte) ([32]byte, error) {
	out, err := planManager.abi.Unpack("activate", data)
	if err != nil {
		return *new([32]byte), err
	}
	out0 := *abi.ConvertType(out[0], new([32]byte)).(*[32]byte)
	return out0, nil
}

// PackCharge is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x63834565.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function charge((address,address,address,uint256,uint256,uint256,uint256,bytes32) plan, uint256 amount, bytes32 ref) returns()
func (planManager *PlanManager) PackCharge(plan PlanManagerPlan, amount *big.Int, ref [32]byte) []byte {
	enc, err := planManager.abi.Pack("charge", plan, amount, ref)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackCharge is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x63834565.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function charge((address,address,address,uint256,uint256,uint256,uint256,bytes32) plan, uint256 amount, bytes32 ref) returns()
func (planManager *PlanManager) TryPackCharge(plan PlanManagerPlan, amount *big.Int, ref [32]byte) ([]byte, error) {
	return planManager.abi.Pack("charge", plan, amount, ref)
}

// PackEip712Domain is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x84b0196e.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function eip712Domain() view returns(bytes1 fields, string name, string version, uint256 chainId, address verifyingContract, bytes32 salt, uint256[] extensions)
func (planManager *PlanManager) PackEip712Domain() []byte {
	enc, err := planManager.abi.Pack("eip712Domain")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackEip712Domain is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x84b0196e.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function eip712Domain() view returns(bytes1 fields, string name, string version, uint256 chainId, address verifyingContract, bytes32 salt, uint256[] extensions)
func (planManager *PlanManager) TryPackEip712Domain() ([]byte, error) {
	return planManager.abi.Pack("eip712Domain")
}

// Eip712DomainOutput serves as a container for the return parameters of contract
// method Eip712Domain.
type Eip712DomainOutput struct {
	Fields            [1]byte
	Name              string
	Version           string
	ChainId           *big.Int
	VerifyingContract common.Address
	Salt              [32]byte
	Extensions        []*big.Int
}

// UnpackEip712Domain is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x84b0196e.
//
// Solidity: function eip712Domain() view returns(bytes1 fields, string name, string version, uint256 chainId, address verifyingContract, bytes32 salt, uint256[] extensions)
func (planManager *PlanManager) UnpackEip712Domain(data []byte) (Eip712DomainOutput, error) {
	out, err := planManager.abi.Unpack("eip712Domain", data)
	outstruct := new(Eip712DomainOutput)
	if err != nil {
		return *outstruct, err
	}
	outstruct.Fields = *abi.ConvertType(out[0], new([1]byte)).(*[1]byte)
	outstruct.Name = *abi.ConvertType(out[1], new(string)).(*string)
	outstruct.Version = *abi.ConvertType(out[2], new(string)).(*string)
	outstruct.ChainId = abi.ConvertType(out[3], new(big.Int)).(*big.Int)
	outstruct.VerifyingContract = *abi.ConvertType(out[4], new(common.Address)).(*common.Address)
	outstruct.Salt = *abi.ConvertType(out[5], new([32]byte)).(*[32]byte)
	outstruct.Extensions = *abi.ConvertType(out[6], new([]*big.Int)).(*[]*big.Int)
	return *outstruct, nil
}

// PackOperator is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x570ca735.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function operator() view returns(address)
func (planManager *PlanManager) PackOperator() []byte {
	enc, err := planManager.abi.Pack("operator")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackOperator is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x570ca735.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function operator() view returns(address)
func (planManager *PlanManager) TryPackOperator() ([]byte, error) {
	return planManager.abi.Pack("operator")
}

// UnpackOperator is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x570ca735.
//
// Solidity: function operator() view returns(address)
func (planManager *PlanManager) UnpackOperator(data []byte) (common.Address, error) {
	out, err := planManager.abi.Unpack("operator", data)
	if err != nil {
		return *new(common.Address), err
	}
	out0 := *abi.ConvertType(out[0], new(common.Address)).(*common.Address)
	return out0, nil
}

// PackPlanId is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xa72cee92.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function planId((address,address,address,uint256,uint256,uint256,uint256,bytes32) plan) view returns(bytes32)
func (planManager *PlanManager) PackPlanId(plan PlanManagerPlan) []byte {
	enc, err := planManager.abi.Pack("planId", plan)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackPlanId is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xa72cee92.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function planId((address,address,address,uint256,uint256,uint256,uint256,bytes32) plan) view returns(bytes32)
func (planManager *PlanManager) TryPackPlanId(plan PlanManagerPlan) ([]byte, error) {
	return planManager.abi.Pack("planId", plan)
}

// UnpackPlanId is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xa72cee92.
//
// Solidity: function planId((address,address,address,uint256,uint256,uint256,uint256,bytes32) plan) view returns(bytes32)
func (planManager *PlanManager) UnpackPlanId(data []byte) ([32]byte, error) {
	out, err := planManager.abi.Unpack("planId", data)
	if err != nil {
		return *new([32]byte), err
	}
	out0 := *abi.ConvertType(out[0], new([32]byte)).(*[32]byte)
	return out0, nil
}

// PackPlanState is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x96122286.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function planState(bytes32 id) view returns((uint8,uint64,uint256))
func (planManager *PlanManager) PackPlanState(id [32]byte) []byte {
	enc, err := planManager.abi.Pack("planState", id)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackPlanState is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x96122286.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function planState(bytes32 id) view returns((uint8,uint64,uint256))
func (planManager *PlanManager) TryPackPlanState(id [32]byte) ([]byte, error) {
	return planManager.abi.Pack("planState", id)
}

// UnpackPlanState is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x96122286.
//
// Solidity: function planState(bytes32 id) view returns((uint8,uint64,uint256))
func (planManager *PlanManager) UnpackPlanState(data []byte) (PlanManagerState, error) {
	out, err := planManager.abi.Unpack("planState", data)
	if err != nil {
		return *new(PlanManagerState), err
	}
	out0 := *abi.ConvertType(out[0], new(PlanManagerState)).(*PlanManagerState)
	return out0, nil
}

// PackRemaining is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xb873d651.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function remaining((address,address,address,uint256,uint256,uint256,uint256,bytes32) plan) view returns(uint256)
func (planManager *PlanManager) PackRemaining(plan PlanManagerPlan) []byte {
	enc, err := planManager.abi.Pack("remaining", plan)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackRemaining is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xb873d651.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function remaining((address,address,address,uint256,uint256,uint256,uint256,bytes32) plan) view returns(uint256)
func (planManager *PlanManager) TryPackRemaining(plan PlanManagerPlan) ([]byte, error) {
	return planManager.abi.Pack("remaining", plan)
}

// UnpackRemaining is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xb873d651.
//
// Solidity: function remaining((address,address,address,uint256,uint256,uint256,uint256,bytes32) plan) view returns(uint256)
func (planManager *PlanManager) UnpackRemaining(data []byte) (*big.Int, error) {
	out, err := planManager.abi.Unpack("remaining", data)
	if err != nil {
		return new(big.Int), err
	}
	out0 := abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	return out0, nil
}

// PackRevoke is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x0df88660.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function revoke((address,address,address,uint256,uint256,uint256,uint256,bytes32) plan) returns()
func (planManager *PlanManager) PackRevoke(plan PlanManagerPlan) []byte {
	enc, err := planManager.abi.Pack("revoke", plan)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackRevoke is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x0df88660.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function revoke((address,address,address,uint256,uint256,uint256,uint256,bytes32) plan) returns()
func (planManager *PlanManager) TryPackRevoke(plan PlanManagerPlan) ([]byte, error) {
	return planManager.abi.Pack("revoke", plan)
}

// PackRevokeWithSignature is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xa4c625b7.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function revokeWithSignature((address,address,address,uint256,uint256,uint256,uint256,bytes32) plan, uint256 deadline, bytes signature) returns()
func (planManager *PlanManager) PackRevokeWithSignature(plan PlanManagerPlan, deadline *big.Int, signature []byte) []byte {
	enc, err := planManager.abi.Pack("revokeWithSignature", plan, deadline, signature)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackRevokeWithSignature is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xa4c625b7.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function revokeWithSignature((address,address,address,uint256,uint256,uint256,uint256,bytes32) plan, uint256 deadline, bytes signature) returns()
func (planManager *PlanManager) TryPackRevokeWithSignature(plan PlanManagerPlan, deadline *big.Int, signature []byte) ([]byte, error) {
	return planManager.abi.Pack("revokeWithSignature", plan, deadline, signature)
}

// PackSetOperator is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xb3ab15fb.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function setOperator(address next) returns()
func (planManager *PlanManager) PackSetOperator(next common.Address) []byte {
	enc, err := planManager.abi.Pack("setOperator", next)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackSetOperator is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xb3ab15fb.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function setOperator(address next) returns()
func (planManager *PlanManager) TryPackSetOperator(next common.Address) ([]byte, error) {
	return planManager.abi.Pack("setOperator", next)
}

// PlanManagerOperatorChanged represents a OperatorChanged event raised by the PlanManager contract.
type PlanManagerOperatorChanged struct {
	Previous common.Address
	Next     common.Address
	Raw      *types.Log // Blockchain specific contextual infos
}

const PlanManagerOperatorChangedEventName = "OperatorChanged"

// ContractEventName returns the user-defined event name.
func (PlanManagerOperatorChanged) ContractEventName() string {
	return PlanManagerOperatorChangedEventName
}

// UnpackOperatorChangedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event OperatorChanged(address indexed previous, address indexed next)
func (planManager *PlanManager) UnpackOperatorChangedEvent(log *types.Log) (*PlanManagerOperatorChanged, error) {
	event := "OperatorChanged"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != planManager.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(PlanManagerOperatorChanged)
	if len(log.Data) > 0 {
		if err := planManager.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range planManager.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}

// PlanManagerPlanActivated represents a PlanActivated event raised by the PlanManager contract.
type PlanManagerPlanActivated struct {
	PlanId       [32]byte
	Payer        common.Address
	Payee        common.Address
	Token        common.Address
	CapPerPeriod *big.Int
	Period       *big.Int
	Start        *big.Int
	End          *big.Int
	Raw          *types.Log // Blockchain specific contextual infos
}

const PlanManagerPlanActivatedEventName = "PlanActivated"

// ContractEventName returns the user-defined event name.
func (PlanManagerPlanActivated) ContractEventName() string {
	return PlanManagerPlanActivatedEventName
}

// UnpackPlanActivatedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event PlanActivated(bytes32 indexed planId, address indexed payer, address indexed payee, address token, uint256 capPerPeriod, uint256 period, uint256 start, uint256 end)
func (planManager *PlanManager) UnpackPlanActivatedEvent(log *types.Log) (*PlanManagerPlanActivated, error) {
	event := "PlanActivated"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != planManager.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(PlanManagerPlanActivated)
	if len(log.Data) > 0 {
		if err := planManager.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range planManager.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}

// PlanManagerPlanCharged represents a PlanCharged event raised by the PlanManager contract.
type PlanManagerPlanCharged struct {
	PlanId        [32]byte
	Ref           [32]byte
	Amount        *big.Int
	PeriodIndex   *big.Int
	SpentInPeriod *big.Int
	Raw           *types.Log // Blockchain specific contextual infos
}

const PlanManagerPlanChargedEventName = "PlanCharged"

// ContractEventName returns the user-defined event name.
func (PlanManagerPlanCharged) ContractEventName() string {
	return PlanManagerPlanChargedEventName
}

// UnpackPlanChargedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event PlanCharged(bytes32 indexed planId, bytes32 indexed ref, uint256 amount, uint256 periodIndex, uint256 spentInPeriod)
func (planManager *PlanManager) UnpackPlanChargedEvent(log *types.Log) (*PlanManagerPlanCharged, error) {
	event := "PlanCharged"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != planManager.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(PlanManagerPlanCharged)
	if len(log.Data) > 0 {
		if err := planManager.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range planManager.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}

// PlanManagerPlanRevoked represents a PlanRevoked event raised by the PlanManager contract.
type PlanManagerPlanRevoked struct {
	PlanId [32]byte
	Payer  common.Address
	Raw    *types.Log // Blockchain specific contextual infos
}

const PlanManagerPlanRevokedEventName = "PlanRevoked"

// ContractEventName returns the user-defined event name.
func (PlanManagerPlanRevoked) ContractEventName() string {
	return PlanManagerPlanRevokedEventName
}

// UnpackPlanRevokedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event PlanRevoked(bytes32 indexed planId, address indexed payer)
func (planManager *PlanManager) UnpackPlanRevokedEvent(log *types.Log) (*PlanManagerPlanRevoked, error) {
	event := "PlanRevoked"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != planManager.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(PlanManagerPlanRevoked)
	if len(log.Data) > 0 {
		if err := planManager.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range planManager.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}
