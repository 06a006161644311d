import { t } from "elysia";
import { ForbiddenError, NotFoundError } from "../../errors/errors.ts";
import { problemResponses } from "../../errors/problem-model.ts";

const decimal = (description: string) => t.String({ pattern: "^-?[0-9]+(\\.[0-9]+)?$", description });

export const POSITIONS_EXAMPLE = {
  agent_id: "agt_20ew8vwrxtsore1bcqcx",
  positions: [
    {
      token_id: "62116011324642788450213843133477763167049099528131416799711191854278105821744",
      market_id: "62116011324642788450213843133477763167049099528131416799711191854278105821744",
      condition_id: "0xd71d3950174e6699b8a8faef8001b896932cb69636e6e0bb74dfc1173a3452d3",
      shares: "10",
      avg_price: "0.5",
      cost_usdc: "5",
      realized_pnl_usdc: "0.2",
      mark_price: "0.5",
      unrealized_pnl_usdc: "0",
    },
  ],
};

export const PositionsModel = t.Object(
  {
    agent_id: t.String(),
    positions: t.Array(
      t.Object({
        token_id: t.String({ description: "the outcome token" }),
        market_id: t.String({ description: "the outcome token, as intents name it" }),
        condition_id: t.String(),
        shares: decimal("shares held, from the fills reported"),
        avg_price: decimal("average price paid per share held"),
        cost_usdc: decimal("what the shares held cost (average cost)"),
        realized_pnl_usdc: decimal("what sells received beyond the average cost of the shares they sold"),
        mark_price: t.Union([decimal("the mid of the book's best bid and ask"), t.Null()]),
        unrealized_pnl_usdc: t.Union([decimal("shares × mark − cost"), t.Null()]),
      }),
    ),
  },
  { examples: [POSITIONS_EXAMPLE] },
);
export type PositionsModel = typeof PositionsModel.static;

export const positionsDetail = {
  summary: "The agent's positions per outcome token, from its fills, with realized and unrealized PnL",
  tags: ["agents"],
  responses: {
    ...problemResponses(new ForbiddenError("this API key is scoped to another agent"), new NotFoundError("agent agt_20ew8vau60wtjq891xdc")),
  },
};
