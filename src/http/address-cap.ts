/**
 * Requests in progress per client address, with a cap. Over HTTP/1.1 a connection carries one request
 * at a time, so this bounds the busy connections (a stalled upload included) one address can hold;
 * idle ones are closed by the server's idle timeout.
 */
export class AddressCap {
  private readonly inProgress = new Map<string, number>();

  /** @param max requests one address may have in progress; 0 = no cap */
  constructor(readonly max: number) {}

  /** Counts a request in; false (and nothing counted) when its address is at the cap. */
  acquire(address: string): boolean {
    const n = this.inProgress.get(address) ?? 0;
    if (this.max > 0 && n >= this.max) return false;
    this.inProgress.set(address, n + 1);
    return true;
  }

  release(address: string): void {
    const n = (this.inProgress.get(address) ?? 0) - 1;
    if (n > 0) this.inProgress.set(address, n);
    else this.inProgress.delete(address);
  }

  count(address: string): number {
    return this.inProgress.get(address) ?? 0;
  }
}
