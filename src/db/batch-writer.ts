/**
 * Group commit: writes that arrive while a transaction is being committed are
 * gathered and committed together in the next one, so concurrent requests share
 * one durable commit instead of paying for one each. Every caller's promise
 * settles only after the transaction holding its item has committed.
 *
 * A batch starts at the end of the current event-loop turn (setImmediate), not
 * at once: the requests whose bytes arrived in the same turn then share it. This
 * matters most for an in-process database (PGlite), whose commit runs on this
 * thread and finishes before another request is read: started at once, every
 * batch would hold a single write.
 */
export class BatchWriter<T> {
  private pending: { item: T; resolve: () => void; reject: (e: unknown) => void }[] = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(
    private readonly flush: (items: T[]) => Promise<void>,
    private readonly opts: { maxInFlight: number; maxBatch: number; onBatch?: (size: number) => void },
  ) {}

  write(item: T): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || !this.pending.length || this.inFlight >= this.opts.maxInFlight) return;
    this.scheduled = true;
    setImmediate(this.pump);
  }

  private async oneByOne(batch: { item: T; resolve: () => void; reject: (e: unknown) => void }[]): Promise<void> {
    for (const b of batch) {
      try {
        await this.flush([b.item]);
        b.resolve();
      } catch (error) {
        b.reject(error);
      }
    }
  }

  private readonly pump = (): void => {
    this.scheduled = false;
    while (this.pending.length && this.inFlight < this.opts.maxInFlight) {
      const batch = this.pending.length <= this.opts.maxBatch ? this.pending : this.pending.slice(0, this.opts.maxBatch);
      this.pending = batch === this.pending ? [] : this.pending.slice(batch.length);
      this.inFlight++;
      this.opts.onBatch?.(batch.length);
      const items = new Array<T>(batch.length);
      for (let i = 0; i < batch.length; i++) items[i] = batch[i].item;
      let run: Promise<void>;
      try {
        run = this.flush(items);
      } catch (error) {
        run = Promise.reject(error);
      }
      run
        .then(
          () => {
            for (const b of batch) b.resolve();
          },
          // One bad item must not fail the others that shared its transaction: retry them one by one.
          (error) => (batch.length === 1 ? batch[0].reject(error) : this.oneByOne(batch)),
        )
        .finally(() => {
          this.inFlight--;
          this.schedule();
        });
    }
  };
}
