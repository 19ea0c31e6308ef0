/** Runs tasks one at a time per key, in the order they arrive; a key with no task waiting holds nothing. */
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<void>>();

  /**
   * `task` once every earlier task of `key` has settled. With none pending it starts at once, in the
   * caller's turn (nothing else runs between the call and its start); `waited` says whether it waited.
   */
  async run<T>(key: string, task: (waited: boolean) => Promise<T>): Promise<T> {
    const previous = this.tails.get(key);
    let release!: () => void;
    const done = new Promise<void>((resolve) => (release = resolve));
    const tail = previous ? previous.then(() => done) : done;
    this.tails.set(key, tail);
    if (previous) await previous;
    try {
      return await task(previous !== undefined);
    } finally {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}
