/**
 * A test app on `database` and one trader whose agent lease the app's own registry has let go, so that
 * the lease holders a suite makes (DbLeases) take the agent in turns.
 */
import type { Database } from "../../src/db/database.ts";
import { createTestApp, type TestApp } from "./app.ts";
import { newTrader } from "./payload.ts";

export async function unleasedTrader(database: Database): Promise<{ t: TestApp; agentId: string; orgId: string }> {
  const t = await createTestApp(database);
  const trader = await newTrader(t);
  await t.app.services.agents.registry.releaseAll();
  return { t, agentId: trader.agent.id, orgId: trader.agent.org_id };
}
