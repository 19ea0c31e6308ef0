import { describe, expect, test } from 'bun:test';
import type { IndexedDoc, PendingFile } from '../../src/db/repos/content.ts';
import { ContentSearchService } from '../../src/services/search/content-search.ts';

type Deps = ConstructorParameters<typeof ContentSearchService>[0];

/** An indexer over stub stores that logs when each file is read and each extraction starts and ends. */
function indexer(files: PendingFile[]) {
  const events: string[] = [];
  const recorded: IndexedDoc[] = [];
  let pending = [...files];
  const nameOf = (key: string) => files.find((f) => f.storageKey === key)!.name;
  const deps = {
    repo: {
      queueMissing: () => null,
      isEmpty: () => recorded.length === 0,
      nextPending: (limit: number) => pending.slice(0, limit),
      dropPending: () => {},
    },
    settings: { get: () => true },
    storage: {
      readBytes: async (key: string, info: { size: number }) => {
        events.push(`read ${nameOf(key)}`);
        await Bun.sleep(1);
        return new TextEncoder().encode('x'.repeat(info.size));
      },
    },
    extractor: {
      size: 1,
      extract: async (name: string) => {
        events.push(`extract ${name}`);
        await Bun.sleep(20);
        events.push(`extracted ${name}`);
        return { text: `text of ${name}` };
      },
      kill: () => {},
    },
    writer: {
      record: async (docs: IndexedDoc[]) => {
        recorded.push(...docs);
        pending = pending.filter((f) => !docs.some((d) => d.file.seq === f.seq));
        return docs.length;
      },
    },
    clock: { now: () => 0 },
    log: { info: () => {}, warn: () => {}, error: () => {} },
    limits: { maxTextBytes: 1024 ** 2, maxFileBytes: 1024 ** 3 },
    pollMs: 1000,
  } as unknown as Deps;
  return { service: new ContentSearchService(deps), events, recorded };
}

const file = (seq: number, size: number): PendingFile => ({
  seq,
  id: `id${seq}`,
  accountId: 'account',
  name: `doc${seq}.txt`,
  size,
  storageKey: `key${seq}`,
  wrappedKey: 'wrapped',
  library: false,
  optedOut: false,
});

describe('content indexer', () => {
  test('the next small file is read while the one before is extracted; a large one only after', async () => {
    const { service, events, recorded } = indexer([file(1, 100), file(2, 100), file(3, 300 * 1024), file(4, 100)]);
    (service as unknown as { running: boolean }).running = true;
    await service.step();
    expect(recorded.map((d) => [d.file.seq, d.state, d.text])).toEqual([
      [1, 'indexed', 'text of doc1.txt'],
      [2, 'indexed', 'text of doc2.txt'],
      [3, 'indexed', 'text of doc3.txt'],
      [4, 'indexed', 'text of doc4.txt'],
    ]);
    const before = (a: string, b: string) => events.indexOf(a) < events.indexOf(b);
    expect(before('read doc2.txt', 'extracted doc1.txt')).toBe(true);
    expect(before('extracted doc2.txt', 'read doc3.txt')).toBe(true);
    expect(before('read doc4.txt', 'extracted doc3.txt')).toBe(true);
  });
});
