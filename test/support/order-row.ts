/**
 * An orders row to insert directly (OrderRepository.insert or drizzle), for suites that need orders
 * without going through the service: a GTC buy of 10 shares at 0.5 on market 1234, with a random hash,
 * made now (`createdAt`, the trading day and the history's one entry follow `over.createdAt` when
 * given) and whose history holds its status with `reason`. `over` names the order and its owner and
 * replaces any other column.
 */
import { randomBytes } from "node:crypto";
import type { NewOrderRow } from "../../src/db/order-repository.ts";

export function orderRow(over: Partial<NewOrderRow> & Pick<NewOrderRow, "id" | "orgId" | "agentId">, reason = "test"): NewOrderRow {
  const at = over.createdAt ?? new Date();
  const status = over.status ?? "open";
  return {
    mode: "payload",
    marketId: "1234",
    conditionId: "0xc0",
    side: "buy",
    sizeUnits: 10_000_000n,
    price: "0.5",
    notionalUnits: 5_000_000n,
    orderType: "GTC",
    expiration: "0",
    status,
    orderHash: `0x${randomBytes(32).toString("hex")}`,
    tradingDay: at.toISOString().slice(0, 10),
    history: [{ status, at: at.toISOString(), reason }],
    createdAt: at,
    updatedAt: at,
    ...over,
  };
}
