import { t } from "elysia";
import { ForbiddenError, NotFoundError } from "../../errors/errors.ts";
import { problemResponses } from "../../errors/problem-model.ts";

/** From a real run: the agent after one approved 5 USDC buy at 0.49 (reserved, awaiting its signature). */
export const EXPOSURE_EXAMPLE = {"agent_id": "agt_20ew8vwrxtsore1bcqcx", "limit_usdc": 200, "data": [{"condition_id": "0xd71d3950174e6699b8a8faef8001b896932cb69636e6e0bb74dfc1173a3452d3", "market_ids": ["62116011324642788450213843133477763167049099528131416799711191854278105821744"], "exposure_usdc": 4.998, "positions_cost_usdc": 0, "open_orders_usdc": 4.998}]};

export const ExposureModel = t.Object({
  agent_id: t.String(),
  limit_usdc: t.Number({ description: "max_market_exposure_pct × capital_usdc: the concentration limit per market" }),
  data: t.Array(
    t.Object({
      condition_id: t.String({ description: "the market (both outcome tokens count together)" }),
      market_ids: t.Array(t.String(), { description: "the outcome token ids the agent has orders or positions on" }),
      exposure_usdc: t.Number({ description: "positions_cost_usdc + open_orders_usdc: what the concentration check counts" }),
      positions_cost_usdc: t.Number({ description: "the positions in this market at cost (average cost of the shares held, from the fills)" }),
      open_orders_usdc: t.Number({
        description:
          "buys reserved, open or unresolved: their unfilled notional; buys that ended: what they are known to have filled beyond their fills (sells count nothing)",
      }),
    }),
  ),
}, { examples: [EXPOSURE_EXAMPLE] });
export type ExposureModel = typeof ExposureModel.static;

export const exposureDetail = {
  summary: "The agent's exposure per market, against its concentration limit",
  tags: ["agents"],
  responses: {
    ...problemResponses(new ForbiddenError("this API key is scoped to another agent"), new NotFoundError("agent agt_20ew8vau60wtjq891xdc")),
  },
};
