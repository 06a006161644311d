/**
 * A FIFO mailbox: messages run one at a time, in the order they were sent.
 * A message is a function; its result (or error) goes back to its sender only,
 * and a failing message never stops the ones behind it.
 */
import { type Clock, systemClock } from "../src/domain/clock.ts";

/** Thrown by `admit` when the actor already holds as many requests as it may: the caller should retry later. */
export class MailboxFullError extends Error {
  override name = "MailboxFullError";
  constructor(readonly capacity: number) {
    super(`the agent's mailbox is full (${capacity} requests in progress)`);
  }
}

/** A queued message and its sender's answer. */
interface Letter {
  message: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export class Mailbox {
  /** Each entry: one message and the functions that answer its sender. */
  private readonly queue: Array<Letter> = [];
  private running = false;
  private lastActivity: number;
  private admitted = 0;

  /**
   * `capacity` bounds the requests admitted from outside (`admit`) that have not finished: a full
   * mailbox refuses at once instead of growing. The actor's own follow-up messages (`send`) are
   * never refused: dropping one would lose a status change.
   */
  constructor(
    private readonly capacity = Number.POSITIVE_INFINITY,
    private readonly clock: Clock = systemClock,
  ) {
    this.lastActivity = this.clock.now();
  }

  /** Runs one outside request (which may send several messages), or throws MailboxFullError when full. */
  async admit<T>(request: () => Promise<T>): Promise<T> {
    if (this.admitted >= this.capacity) throw new MailboxFullError(this.capacity);
    this.admitted++;
    try {
      return await request();
    } finally {
      this.admitted--;
    }
  }

  /** Outside requests in progress. */
  get inProgress(): number {
    return this.admitted;
  }

  /** Sends a message and resolves with its result once it has run. */
  send<T>(message: () => T | Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ message, resolve: resolve as (value: unknown) => void, reject });
      if (!this.running) void this.drain();
    });
  }

  /** Messages waiting or running. */
  get pending(): number {
    return this.queue.length + (this.running ? 1 : 0);
  }

  /** True when nothing runs or waits. */
  get idle(): boolean {
    return !this.running && this.queue.length === 0;
  }

  /** Milliseconds since the last message finished (or the mailbox was made). */
  idleFor(now = this.clock.now()): number {
    return this.idle ? now - this.lastActivity : 0;
  }

  /**
   * Runs queued messages until the queue is empty. The mailbox is marked idle
   * before the last sender is answered, so a sender that awaited its message
   * sees `idle` and `idleFor` already reflect that it finished.
   */
  private async drain(): Promise<void> {
    this.running = true;
    for (;;) {
      const next = this.queue.shift();
      if (!next) {
        this.running = false;
        this.lastActivity = this.clock.now();
        return;
      }
      let ok = true;
      let value: unknown;
      try {
        value = await next.message();
      } catch (error) {
        ok = false;
        value = error;
      }
      const done = this.queue.length === 0;
      if (done) {
        this.running = false;
        this.lastActivity = this.clock.now();
      }
      if (ok) next.resolve(value);
      else next.reject(value);
      if (done) return;
    }
  }
}
