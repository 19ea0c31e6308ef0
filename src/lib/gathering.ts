/**
 * A scope, entered again as a no-op while it is open, that gathers a batch of writes while its callback runs
 * and hands the batch to `flush` when it ends, thrown or not: what each write inside one transaction would
 * repeat is done once.
 */
export class Gathering<B> {
  /** The batch being gathered, or null outside the scope. */
  current: B | null = null;

  constructor(
    private readonly start: () => B,
    private readonly flush: (batch: B) => void,
  ) {}

  run<T>(write: () => T): T {
    if (this.current) return write();
    const batch = this.start();
    this.current = batch;
    try {
      return write();
    } finally {
      this.current = null;
      this.flush(batch);
    }
  }
}
