import { t } from "elysia";

export const ExposureModel = t.Object({
  agent_id: t.String(),
  limit_usdc: t.Number({ description: "max_market_exposure_pct × capital_usdc: the concentration limit per market" }),
  data: t.Array(
    t.Object({
      condition_id: t.String({ description: "the market (both outcome tokens count together)" }),
      market_ids: t.Array(t.String(), { description: "the outcome token ids the agent has orders on" }),
      exposure_usdc: t.Number({ description: "open and filled buys (reserved ones too), net of filled sells" }),
    }),
  ),
});
export type ExposureModel = typeof ExposureModel.static;
