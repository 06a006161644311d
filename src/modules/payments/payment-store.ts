/**
 * The database side of x402 payments: the nonce reservation (a unique row), the paying wallet's
 * agent (one per wallet, in an organization of its own), the payment's outcome, the removal of what
 * an unpaid request created, and the admin listing.
 */
import { and, desc, eq, inArray, lt, ne, or } from "drizzle-orm";
import type { Db } from "../../db/database.ts";
import { agents, credentials, events, kills, orders, orgs, type PaymentStatus, payments, riskDecisions, x402Wallets } from "../../db/schema.ts";
import { decodeCursor, pageOf } from "../../http/pagination.ts";
import { newId } from "../../domain/ids.ts";
import type { Fence } from "../../../actors/lease-port.ts";
import { fenceCheck, fenced } from "../../db/lease-fence.ts";

export type PaymentRow = typeof payments.$inferSelect;
export type NewPayment = typeof payments.$inferInsert;
export interface WalletAgent {
  orgId: string;
  agentId: string;
  created: boolean;
}

class LostRace extends Error {}

export class PaymentStore {
  constructor(private readonly db: Db) {}

  /** The payload of the authorization recorded with this nonce (any status), or null when it was never seen. */
  async paymentWithNonce(k: { network: string; asset: string; payer: string; nonce: string }): Promise<Record<string, unknown> | null> {
    const [row] = await this.db
      .select({ payload: payments.payload })
      .from(payments)
      .where(and(eq(payments.network, k.network), eq(payments.asset, k.asset), eq(payments.payer, k.payer), eq(payments.nonce, k.nonce)))
      .limit(1);
    return row ? (row.payload as Record<string, unknown>) : null;
  }

  /** Records the payment, reserving its nonce; false when the nonce is already taken. */
  async reserve(row: NewPayment): Promise<boolean> {
    const inserted = await this.db.insert(payments).values(row).onConflictDoNothing().returning({ id: payments.id });
    return inserted.length === 1;
  }

  /** The wallet's agent when it has one (read only). */
  async walletOf(payer: string): Promise<{ orgId: string; agentId: string } | null> {
    const [row] = await this.db.select({ orgId: x402Wallets.orgId, agentId: x402Wallets.agentId }).from(x402Wallets).where(eq(x402Wallets.payer, payer));
    return row ?? null;
  }

  /**
   * The wallet's agent, created on its first paid request (payload mode, the given limits), and
   * the payment attached to it in the same transaction: a concurrent removal of a just-created
   * agent (removeWalletAgent) either sees this payment or runs before the wallet row is read.
   */
  async walletAgent(payer: string, limits: Record<string, unknown>, paymentId: string): Promise<WalletAgent> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const found = await this.db.transaction(async (tx) => {
        const [row] = await tx.select({ orgId: x402Wallets.orgId, agentId: x402Wallets.agentId }).from(x402Wallets).where(eq(x402Wallets.payer, payer)).for("share");
        if (row) await tx.update(payments).set({ agentId: row.agentId, createdAgent: false, updatedAt: new Date() }).where(eq(payments.id, paymentId));
        return row ?? null;
      });
      if (found) return { ...found, created: false };
      try {
        return await this.db.transaction(async (tx) => {
          const now = new Date();
          const orgId = newId("org");
          const agentId = newId("agt");
          await tx.insert(orgs).values({ id: orgId, name: `x402 ${payer}`, createdAt: now });
          await tx.insert(agents).values({
            id: agentId,
            orgId,
            name: null,
            mode: "payload",
            walletAddress: payer,
            signerAddress: payer,
            signatureType: 0,
            limits,
            createdAt: now,
            updatedAt: now,
          });
          const won = await tx.insert(x402Wallets).values({ payer, orgId, agentId, createdAt: now }).onConflictDoNothing().returning({ agentId: x402Wallets.agentId });
          // Another request of this wallet created its agent first: ours is rolled back, theirs is read again.
          if (won.length === 0) throw new LostRace();
          await tx.update(payments).set({ agentId, createdAgent: true, updatedAt: now }).where(eq(payments.id, paymentId));
          return { orgId, agentId, created: true };
        });
      } catch (error) {
        if (!(error instanceof LostRace)) throw error;
      }
    }
    throw new Error("the wallet's agent could not be set up");
  }

  async finish(paymentId: string, outcome: { status: PaymentStatus; failureReason?: string | null; transaction?: string | null; responseStatus?: number | null }): Promise<void> {
    await this.db
      .update(payments)
      .set({
        status: outcome.status,
        failureReason: outcome.failureReason ?? null,
        transaction: outcome.transaction ?? null,
        responseStatus: outcome.responseStatus ?? null,
        updatedAt: new Date(),
      })
      .where(and(eq(payments.id, paymentId), eq(payments.status, "verified")));
  }

  /**
   * `write` in one transaction, behind the agent's fence when one is given (the lease its actor runs
   * under, src/db/lease-fence.ts): the removals below are the agent's writes like its orders'.
   */
  private tx<T>(fence: Fence | undefined, write: (tx: Db) => Promise<T>): Promise<T> {
    return fenced(fence, () =>
      this.db.transaction(async (tx) => {
        if (fence) await tx.execute(fenceCheck(fence));
        return write(tx as unknown as Db);
      }),
    );
  }

  /** Deletes an order an unpaid request created, with its risk decision and its events. */
  async removeOrder(agentId: string, orderId: string, fence?: Fence): Promise<void> {
    await this.tx(fence, async (tx) => {
      await tx.delete(riskDecisions).where(and(eq(riskDecisions.agentId, agentId), eq(riskDecisions.orderId, orderId)));
      await tx.delete(events).where(and(eq(events.agentId, agentId), eq(events.orderId, orderId)));
      await tx.delete(orders).where(and(eq(orders.agentId, agentId), eq(orders.id, orderId)));
    });
  }

  /** Deletes a risk decision (a rejection) an unpaid request recorded. */
  async removeDecision(agentId: string, decisionId: string, fence?: Fence): Promise<void> {
    if (!fence) {
      await this.db.delete(riskDecisions).where(and(eq(riskDecisions.agentId, agentId), eq(riskDecisions.id, decisionId)));
      return;
    }
    await this.tx(fence, (tx) => tx.delete(riskDecisions).where(and(eq(riskDecisions.agentId, agentId), eq(riskDecisions.id, decisionId))));
  }

  /**
   * Deletes a wallet's agent that an unpaid request created, with everything it holds, unless
   * another payment of the wallet (verified or settled) uses it. Returns whether it was deleted.
   */
  async removeWalletAgent(paymentId: string, w: { payer: string; orgId: string; agentId: string }, fence?: Fence): Promise<boolean> {
    return this.tx(fence, async (tx) => {
      // Lock the wallet row so a concurrent first request cannot pick the agent up meanwhile.
      const [mine] = await tx.select().from(x402Wallets).where(and(eq(x402Wallets.payer, w.payer), eq(x402Wallets.agentId, w.agentId))).for("update");
      if (!mine) return false;
      const [other] = await tx
        .select({ id: payments.id })
        .from(payments)
        .where(and(eq(payments.agentId, w.agentId), ne(payments.id, paymentId), inArray(payments.status, ["verified", "settled"])))
        .limit(1);
      if (other) return false;
      await tx.delete(riskDecisions).where(eq(riskDecisions.agentId, w.agentId));
      await tx.delete(events).where(eq(events.agentId, w.agentId));
      await tx.delete(orders).where(eq(orders.agentId, w.agentId));
      await tx.delete(kills).where(eq(kills.agentId, w.agentId));
      await tx.delete(credentials).where(eq(credentials.agentId, w.agentId));
      await tx.delete(x402Wallets).where(eq(x402Wallets.payer, w.payer));
      await tx.update(payments).set({ agentId: null }).where(eq(payments.agentId, w.agentId));
      await tx.delete(agents).where(eq(agents.id, w.agentId));
      await tx.delete(orgs).where(eq(orgs.id, w.orgId));
      return true;
    });
  }

  async list(q: { agentId?: string; payer?: string; status?: PaymentStatus; limit: number; cursor?: string }) {
    const cursor = decodeCursor(q.cursor);
    const rows = await this.db
      .select()
      .from(payments)
      .where(
        and(
          q.agentId ? eq(payments.agentId, q.agentId) : undefined,
          q.payer ? eq(payments.payer, q.payer.toLowerCase()) : undefined,
          q.status ? eq(payments.status, q.status) : undefined,
          cursor ? or(lt(payments.createdAt, cursor.at), and(eq(payments.createdAt, cursor.at), lt(payments.id, cursor.id))) : undefined,
        ),
      )
      .orderBy(desc(payments.createdAt), desc(payments.id))
      .limit(q.limit + 1);
    return pageOf(rows, q.limit, (r) => r);
  }

  async get(paymentId: string): Promise<PaymentRow | null> {
    const [row] = await this.db.select().from(payments).where(eq(payments.id, paymentId));
    return row ?? null;
  }
}

