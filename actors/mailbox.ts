/**
 * A FIFO mailbox: messages run one at a time, in the order they were sent.
 * A message is a function; its result (or error) goes back to its sender only,
 * and a failing message never stops the ones behind it.
 */
export class Mailbox {
  private readonly queue: Array<() => Promise<void>> = [];
  private running = false;
  private lastActivity = Date.now();

  /** Sends a message and resolves with its result once it has run. */
  send<T>(message: () => T | Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push(async () => {
        try {
          resolve(await message());
        } catch (error) {
          reject(error);
        }
      });
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
  idleFor(now = Date.now()): number {
    return this.idle ? now - this.lastActivity : 0;
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      for (let next = this.queue.shift(); next; next = this.queue.shift()) await next();
    } finally {
      this.running = false;
      this.lastActivity = Date.now();
    }
  }
}
