// SPDX-License-Identifier: MIT
// The venue simulator's stand-in for the exchanges and the Conditional Tokens contract on a local
// chain (src/venues/sim/sim-chain.ts): it emits the exchanges' exact OrderFilled event and keeps the
// ERC-1155 balances the simulator sets. Compiled at start-up by npm's solc; placed with anvil_setCode.
pragma solidity ^0.8.20;

contract SimSettlement {
    event OrderFilled(
        bytes32 indexed orderHash,
        address indexed maker,
        address indexed taker,
        uint8 side,
        uint256 tokenId,
        uint256 makerAmountFilled,
        uint256 takerAmountFilled,
        uint256 fee,
        bytes32 builder,
        bytes32 metadata
    );

    struct Fill {
        bytes32 orderHash;
        address maker;
        address taker;
        uint8 side;
        uint256 tokenId;
        uint256 makerAmountFilled;
        uint256 takerAmountFilled;
        uint256 fee;
        bytes32 builder;
        bytes32 metadata;
    }

    struct Balance {
        address owner;
        uint256 tokenId;
        uint256 amount;
    }

    /// ERC-1155 balanceOf(address,uint256) (the getter of this mapping).
    mapping(address => mapping(uint256 => uint256)) public balanceOf;

    /// Emits one OrderFilled per fill, in order, then sets the balances on the Conditional Tokens stand-in.
    function settle(Fill[] calldata fills, address ctf, Balance[] calldata balances) external {
        for (uint256 i = 0; i < fills.length; i++) {
            Fill calldata f = fills[i];
            emit OrderFilled(f.orderHash, f.maker, f.taker, f.side, f.tokenId, f.makerAmountFilled, f.takerAmountFilled, f.fee, f.builder, f.metadata);
        }
        if (balances.length > 0) SimSettlement(ctf).setBalances(balances);
    }

    function setBalances(Balance[] calldata balances) external {
        for (uint256 i = 0; i < balances.length; i++) balanceOf[balances[i].owner][balances[i].tokenId] = balances[i].amount;
    }
}
