import type { Db } from "../../db/database.ts";
import { orgs } from "../../db/schema.ts";
import { newId } from "../../domain/ids.ts";
import type { ApiKeyService } from "../api-keys/service.ts";
import type { CreatedOrg } from "./model.ts";

export class OrgService {
  constructor(
    private readonly db: Db,
    private readonly apiKeys: ApiKeyService,
  ) {}

  /** Registers an organization with its first API key, shown once. */
  async create(name: string): Promise<CreatedOrg> {
    return this.db.transaction(async (tx) => {
      const org = { id: newId("org"), name, createdAt: new Date() };
      await tx.insert(orgs).values(org);
      const key = await this.apiKeys.issue(org.id, { name: "initial" }, tx as unknown as Db);
      return {
        org: { id: org.id, name: org.name, created_at: org.createdAt.toISOString() },
        api_key: { id: key.id, key: key.key, created_at: key.created_at },
      };
    });
  }
}
