/**
 * Things in progress per key, with a cap: requests per client address (over HTTP/1.1 a connection carries one
 * request at a time, so this bounds the busy connections, a stalled upload included, one address can hold; idle
 * ones are closed by the server's idle timeout), ZIPs being made per account.
 */
export class KeyedCap {
  private readonly inProgress = new Map<string, number>();

  /** @param max in progress per key; 0 = no cap */
  constructor(readonly max: number) {}

  /** Counts one in; false (and nothing counted) when its key is at the cap. */
  acquire(key: string): boolean {
    const n = this.inProgress.get(key) ?? 0;
    if (this.max > 0 && n >= this.max) return false;
    this.inProgress.set(key, n + 1);
    return true;
  }

  release(key: string): void {
    const n = (this.inProgress.get(key) ?? 0) - 1;
    if (n > 0) this.inProgress.set(key, n);
    else this.inProgress.delete(key);
  }

  count(key: string): number {
    return this.inProgress.get(key) ?? 0;
  }
}
