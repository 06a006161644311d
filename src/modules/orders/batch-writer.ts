/**
 * Group commit: writes that arrive while a transaction is being committed are
 * gathered and committed together in the next one, so concurrent requests share
 * one durable commit instead of paying for one each. Every caller's promise
 * settles only after the transaction holding its item has committed.
 */
export class BatchWriter<T> {
  private pending: { item: T; resolve: () => void; reject: (e: unknown) => void }[] = [];
  private inFlight = 0;

  constructor(
    private readonly flush: (items: T[]) => Promise<void>,
    private readonly opts: { maxInFlight: number; maxBatch: number; onBatch?: (size: number) => void },
  ) {}

  write(item: T): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      if (this.inFlight < this.opts.maxInFlight) queueMicrotask(() => this.pump());
    });
  }

  private pump(): void {
    while (this.pending.length && this.inFlight < this.opts.maxInFlight) {
      const batch = this.pending.splice(0, this.opts.maxBatch);
      this.inFlight++;
      this.opts.onBatch?.(batch.length);
      this.flush(batch.map((b) => b.item)).then(
        () => {
          for (const b of batch) b.resolve();
        },
        (error) => {
          for (const b of batch) b.reject(error);
        },
      ).finally(() => {
        this.inFlight--;
        this.pump();
      });
    }
  }
}
