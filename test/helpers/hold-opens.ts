import type { TestServer } from './server.ts';

/**
 * Holds the server's reads of stored files, past the first `pass` of them, until the returned function is called:
 * a ZIP stays under way after its first entries, holding its slot.
 */
export function holdOpens(t: TestServer, opts: { pass?: number } = {}): () => void {
  const storage = t.server.ctx.storage;
  const realGet = storage.get.bind(storage);
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let opened = 0;
  storage.get = async (...args: Parameters<typeof realGet>) => {
    if (opened++ >= (opts.pass ?? 0)) await gate;
    return realGet(...args);
  };
  return () => {
    storage.get = realGet;
    release();
  };
}
