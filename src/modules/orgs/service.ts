import type { Db } from "../../db/database.ts";
import { and, eq, isNull } from "drizzle-orm";
import { apiKeys, orgs } from "../../db/schema.ts";
import { newId } from "../../domain/ids.ts";
import type { ApiKeyService } from "../api-keys/service.ts";
import type { CreatedOrg } from "./model.ts";

export class OrgService {
  constructor(
    private readonly db: Db,
    private readonly apiKeys: ApiKeyService,
  ) {}

  /** Registers an organization with its first API key, shown once. */
  /** `reservedId`: the org's id body chosen with the request's Idempotency-Key (see interrupted-requests.ts). */
  async create(name: string, reservedId?: string): Promise<CreatedOrg> {
    return this.db.transaction(async (tx) => {
      const org = { id: reservedId ? `org_${reservedId}` : newId("org"), name, createdAt: new Date() };
      await tx.insert(orgs).values(org);
      const key = await this.apiKeys.issue(org.id, { name: "initial" }, tx as unknown as Db);
      return {
        org: { id: org.id, name: org.name, created_at: org.createdAt.toISOString() },
        api_key: { id: key.id, key: key.key, created_at: key.created_at },
      };
    });
  }

  /**
   * For an organization whose creation answer was lost with a crashed process: its first key was
   * never seen, so it is revoked and a new one issued. Null when the organization does not exist.
   */
  async reissueFirstKey(orgId: string): Promise<CreatedOrg | null> {
    const [org] = await this.db.select().from(orgs).where(eq(orgs.id, orgId));
    if (!org) return null;
    return this.db.transaction(async (tx) => {
      await tx.update(apiKeys).set({ revokedAt: new Date() }).where(and(eq(apiKeys.orgId, orgId), isNull(apiKeys.revokedAt)));
      const key = await this.apiKeys.issue(org.id, { name: "initial" }, tx as unknown as Db);
      return {
        org: { id: org.id, name: org.name, created_at: org.createdAt.toISOString() },
        api_key: { id: key.id, key: key.key, created_at: key.created_at },
      };
    });
  }
}
