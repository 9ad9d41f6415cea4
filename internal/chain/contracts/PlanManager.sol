// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.37;

import {SignatureChecker} from "./SignatureChecker.sol";

interface IERC20PermitToken {
    function permit(address owner, address spender, uint256 value, uint256 deadline, uint8 v, bytes32 r, bytes32 s)
        external;
    function allowance(address owner, address spender) external view returns (uint256);
    function transferFrom(address from, address to, uint256 value) external returns (bool);
}

/// @title PlanManager
/// @notice Capped pull subscriptions. A payer signs (EIP-712) a Plan that lets
/// this contract's operator move at most capPerPeriod of token from the payer
/// straight to the payee in each period of [start, end), until the payer
/// revokes it. Funds never rest here. The operator (tollgate's relayer) pays
/// the gas; the payer needs none, even to revoke (revokeWithSignature).
contract PlanManager {
    struct Plan {
        address payer;
        address payee;
        address token;
        uint256 capPerPeriod;
        uint256 period; // seconds
        uint256 start; // unix seconds, inclusive
        uint256 end; // unix seconds, exclusive
        bytes32 salt;
    }

    /// @notice An EIP-2612 permit for this contract; deadline 0 means none
    /// (the payer approved the contract some other way).
    struct Permit {
        uint256 value;
        uint256 deadline;
        uint8 v;
        bytes32 r;
        bytes32 s;
    }

    enum Status {
        None,
        Active,
        Revoked
    }

    struct State {
        Status status;
        uint64 periodIndex;
        uint256 spent; // in periodIndex
    }

    bytes32 public constant PLAN_TYPEHASH = keccak256(
        "Plan(address payer,address payee,address token,uint256 capPerPeriod,uint256 period,uint256 start,uint256 end,bytes32 salt)"
    );
    bytes32 public constant REVOKE_TYPEHASH = keccak256("Revoke(bytes32 planId,uint256 deadline)");

    address public operator;
    mapping(bytes32 => State) private _states;

    event PlanActivated(
        bytes32 indexed planId,
        address indexed payer,
        address indexed payee,
        address token,
        uint256 capPerPeriod,
        uint256 period,
        uint256 start,
        uint256 end
    );
    event PlanCharged(
        bytes32 indexed planId, bytes32 indexed ref, uint256 amount, uint256 periodIndex, uint256 spentInPeriod
    );
    event PlanRevoked(bytes32 indexed planId, address indexed payer);
    event OperatorChanged(address indexed previous, address indexed next);

    modifier onlyOperator() {
        require(msg.sender == operator, "PlanManager: caller is not the operator");
        _;
    }

    constructor(address initialOperator) {
        require(initialOperator != address(0), "PlanManager: zero operator");
        operator = initialOperator;
        emit OperatorChanged(address(0), initialOperator);
    }

    /// @notice Hands the operator role to another key (relayer key rotation).
    function setOperator(address next) external onlyOperator {
        require(next != address(0), "PlanManager: zero operator");
        emit OperatorChanged(operator, next);
        operator = next;
    }

    string private constant NAME = "PlanManager";
    string private constant VERSION = "1";

    /// @notice The EIP-712 domain (EIP-5267), so signers read it rather than
    /// assume it.
    function eip712Domain()
        external
        view
        returns (
            bytes1 fields,
            string memory name,
            string memory version,
            uint256 chainId,
            address verifyingContract,
            bytes32 salt,
            uint256[] memory extensions
        )
    {
        return (hex"0f", NAME, VERSION, block.chainid, address(this), bytes32(0), new uint256[](0));
    }

    function DOMAIN_SEPARATOR() public view returns (bytes32) {
        return keccak256(
            abi.encode(
                keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"),
                keccak256(bytes(NAME)),
                keccak256(bytes(VERSION)),
                block.chainid,
                address(this)
            )
        );
    }

    /// @notice The plan's id: the EIP-712 digest the payer signs.
    function planId(Plan calldata plan) public view returns (bytes32) {
        bytes32 structHash = keccak256(
            abi.encode(
                PLAN_TYPEHASH,
                plan.payer,
                plan.payee,
                plan.token,
                plan.capPerPeriod,
                plan.period,
                plan.start,
                plan.end,
                plan.salt
            )
        );
        return keccak256(abi.encodePacked("\x19\x01", DOMAIN_SEPARATOR(), structHash));
    }

    function planState(bytes32 id) external view returns (State memory) {
        return _states[id];
    }

    /// @notice What charge would accept now: 0 when the plan is not active,
    /// outside its term, or the period's cap is used up. The allowance and
    /// balance are not considered.
    function remaining(Plan calldata plan) external view returns (uint256) {
        State storage st = _states[planId(plan)];
        if (st.status != Status.Active || block.timestamp < plan.start || block.timestamp >= plan.end) {
            return 0;
        }
        uint256 idx = (block.timestamp - plan.start) / plan.period;
        uint256 spent = idx == st.periodIndex ? st.spent : 0;
        return plan.capPerPeriod - spent;
    }

    /// @notice Records the payer-signed plan, applies the permit and pulls
    /// firstCharge (0 for metered plans that only authorize), atomically.
    function activate(
        Plan calldata plan,
        bytes calldata signature,
        Permit calldata permit,
        uint256 firstCharge,
        bytes32 ref
    ) external onlyOperator returns (bytes32 id) {
        require(plan.payer != address(0) && plan.payee != address(0), "PlanManager: zero address");
        require(plan.token.code.length > 0, "PlanManager: token is not a contract");
        require(plan.period > 0, "PlanManager: zero period");
        require(plan.end > plan.start, "PlanManager: empty term");
        require(plan.capPerPeriod > 0, "PlanManager: zero cap");
        id = planId(plan);
        State storage st = _states[id];
        require(st.status != Status.Revoked, "PlanManager: plan revoked");
        require(st.status == Status.None, "PlanManager: plan already active");
        require(SignatureChecker.isValidSignatureNow(plan.payer, id, signature), "PlanManager: invalid signature");
        if (permit.deadline != 0) {
            // A permit someone else already submitted (it is public once in
            // the mempool) has done its job; the allowance check below is
            // what matters.
            try IERC20PermitToken(plan.token).permit(
                plan.payer, address(this), permit.value, permit.deadline, permit.v, permit.r, permit.s
            ) {} catch {}
        }
        st.status = Status.Active;
        emit PlanActivated(
            id, plan.payer, plan.payee, plan.token, plan.capPerPeriod, plan.period, plan.start, plan.end
        );
        if (firstCharge > 0) {
            _charge(plan, id, st, firstCharge, ref);
        } else {
            require(
                IERC20PermitToken(plan.token).allowance(plan.payer, address(this)) > 0, "PlanManager: allowance is zero"
            );
        }
    }

    /// @notice Pulls amount from the payer to the payee, within the cap of
    /// the current period.
    function charge(Plan calldata plan, uint256 amount, bytes32 ref) external onlyOperator {
        bytes32 id = planId(plan);
        State storage st = _states[id];
        require(st.status != Status.Revoked, "PlanManager: plan revoked");
        require(st.status == Status.Active, "PlanManager: plan not active");
        _charge(plan, id, st, amount, ref);
    }

    /// @notice The payer ends the plan; no charge succeeds after this.
    function revoke(Plan calldata plan) external {
        require(msg.sender == plan.payer, "PlanManager: caller is not the payer");
        _revoke(planId(plan), plan.payer);
    }

    /// @notice Gasless revoke: anyone submits the payer's EIP-712
    /// Revoke(planId, deadline) signature.
    function revokeWithSignature(Plan calldata plan, uint256 deadline, bytes calldata signature) external {
        require(block.timestamp <= deadline, "PlanManager: revocation expired");
        bytes32 id = planId(plan);
        bytes32 digest = keccak256(
            abi.encodePacked("\x19\x01", DOMAIN_SEPARATOR(), keccak256(abi.encode(REVOKE_TYPEHASH, id, deadline)))
        );
        require(SignatureChecker.isValidSignatureNow(plan.payer, digest, signature), "PlanManager: invalid signature");
        _revoke(id, plan.payer);
    }

    function _revoke(bytes32 id, address payer) internal {
        State storage st = _states[id];
        require(st.status != Status.Revoked, "PlanManager: plan revoked");
        st.status = Status.Revoked;
        emit PlanRevoked(id, payer);
    }

    function _charge(Plan calldata plan, bytes32 id, State storage st, uint256 amount, bytes32 ref) internal {
        require(amount > 0, "PlanManager: zero amount");
        require(block.timestamp >= plan.start, "PlanManager: plan not started");
        require(block.timestamp < plan.end, "PlanManager: plan ended");
        uint256 idx = (block.timestamp - plan.start) / plan.period;
        if (idx != st.periodIndex) {
            st.periodIndex = uint64(idx);
            st.spent = 0;
        }
        require(amount <= plan.capPerPeriod - st.spent, "PlanManager: cap exceeded");
        require(
            IERC20PermitToken(plan.token).allowance(plan.payer, address(this)) >= amount,
            "PlanManager: allowance too low"
        );
        st.spent += amount;
        (bool ok, bytes memory ret) =
            plan.token.call(abi.encodeCall(IERC20PermitToken.transferFrom, (plan.payer, plan.payee, amount)));
        if (!ok) {
            assembly {
                revert(add(ret, 0x20), mload(ret))
            }
        }
        require(ret.length == 0 || abi.decode(ret, (bool)), "PlanManager: transfer failed");
        emit PlanCharged(id, ref, amount, idx, st.spent);
    }
}
