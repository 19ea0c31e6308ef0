const MAX_WEIGHT = 20_000;

/**
 * Recently built list pages, valid until the database changes: any write on this connection moves
 * total_changes(), and a commit by another connection (the CLI) moves data_version, so a cached page
 * is never served after anything it shows could have changed. Bounded by the items it holds.
 */
export class PageCache<T> {
  private readonly entries = new Map<string, { value: T; weight: number }>();
  private version = '';
  private weight = 0;

  constructor(
    /** Moves whenever the database changes, on this connection or another (DatabaseRepo.changeVersion). */
    private readonly currentVersion: () => string,
    private readonly weigh: (value: T) => number,
    /** Whether a built value may be kept (a value that a write the version ignores could change may not). */
    private readonly keep: (value: T) => boolean = () => true,
  ) {}

  get(key: string, build: () => T): T {
    const version = this.currentVersion();
    if (version !== this.version) {
      this.entries.clear();
      this.weight = 0;
      this.version = version;
    }
    const hit = this.entries.get(key);
    if (hit) {
      // Re-insert: Map order is the eviction order, least recently used first.
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit.value;
    }
    const value = build();
    // Building may itself write (nothing today); a changed version means the page may already be stale.
    if (this.currentVersion() !== version || !this.keep(value)) return value;
    const weight = Math.max(1, this.weigh(value));
    this.entries.set(key, { value, weight });
    this.weight += weight;
    for (const [k, e] of this.entries) {
      if (this.weight <= MAX_WEIGHT) break;
      this.entries.delete(k);
      this.weight -= e.weight;
    }
    return value;
  }
}
