/**
 * A FIFO mailbox: messages run one at a time, in the order they were sent.
 * A message is a function; its result (or error) goes back to its sender only,
 * and a failing message never stops the ones behind it.
 */
export class Mailbox {
  /** Each entry runs one message and returns the function that answers its sender. */
  private readonly queue: Array<() => Promise<() => void>> = [];
  private running = false;
  private lastActivity = Date.now();

  /** Sends a message and resolves with its result once it has run. */
  send<T>(message: () => T | Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push(async () => {
        try {
          const value = await message();
          return () => resolve(value);
        } catch (error) {
          return () => reject(error);
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
        this.lastActivity = Date.now();
        return;
      }
      const answer = await next();
      const done = this.queue.length === 0;
      if (done) {
        this.running = false;
        this.lastActivity = Date.now();
      }
      answer();
      if (done) return;
    }
  }
}
