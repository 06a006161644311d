/**
 * What the Idempotency-Key plugin (src/http/idempotency.ts) needs of the records it keeps: the port it
 * uses, implemented by the store (src/db/idempotency-store.ts), so HTTP does not import the store.
 */

/** What a request with an Idempotency-Key finds when it claims the key. */
export type Claim =
  | { kind: "claimed"; reservedId: string; run: string }
  | { kind: "interrupted"; reservedId: string | null }
  | { kind: "replay"; status: number; body: string; contentType: string }
  | { kind: "conflict" }
  | { kind: "in_progress" };

/** The Idempotency-Key records, per (scope, key): claims, answers, interruptions and resumes of runs. */
export interface IdempotencyRecords {
  claim(scope: string, key: string, requestHash: string, now?: Date): Promise<Claim>;
  hasAnswer(scope: string, key: string, requestHash: string, now?: Date): Promise<boolean>;
  complete(scope: string, key: string, run: string, status: number, body: string, contentType: string): Promise<boolean>;
  completeInterrupted(scope: string, key: string, status: number, body: string, contentType: string): Promise<boolean>;
  interrupt(scope: string, key: string, run: string): Promise<boolean>;
  resume(scope: string, key: string, now?: Date): Promise<string | null>;
  release(scope: string, key: string, run: string): Promise<void>;
}
