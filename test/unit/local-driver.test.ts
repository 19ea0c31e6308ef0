import { afterAll, describe, expect, spyOn, test } from 'bun:test';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { tempDir } from '../helpers/server.ts';
import { openPaths } from '../helpers/fds.ts';
import { cleanupTempFiles, LocalDriver } from '../../src/storage/local.ts';
import { InvalidStorageKeyError, RangeNotSatisfiableError, StorageNotFoundError } from '../../src/storage/driver.ts';
import { newStorageKey } from '../../src/storage/keys.ts';
import { eventually } from '../helpers/eventually.ts';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));
function driver(knownShards?: number) {
  const d = tempDir('coffer-local-');
  dirs.push(d);
  return new LocalDriver(d, knownShards);
}
async function* from(...parts: string[]) {
  for (const p of parts) yield Buffer.from(p);
}
const text = async (s: ReadableStream<Uint8Array>) => await new Response(s).text();
const tempFiles = (d: LocalDriver) => fs.readdirSync(path.join(d.root, '.tmp'));

/**
 * Watches the driver's opens: `closed` settles once `files` new objects (opened `wx`) are written and closed, and
 * every other handle's sync (a folder's) runs through `onSync` with the folder's path below `root` ('.' for it).
 */
function watchOpens(root: string, files: number, onSync: (dir: string, sync: () => Promise<void>) => Promise<void>) {
  let closedCount = 0;
  let allClosed!: () => void;
  const closed = new Promise<void>((r) => (allClosed = r));
  const realOpen = fsp.open;
  const spy = spyOn(fsp, 'open').mockImplementation(async (file, flags, mode) => {
    const handle = await realOpen(file, flags, mode);
    if (flags === 'wx') {
      const close = handle.close.bind(handle);
      handle.close = async () => {
        await close();
        if (++closedCount === files) allClosed();
      };
      return handle;
    }
    const sync = handle.sync.bind(handle);
    const dir = path.relative(root, String(file)) || '.';
    handle.sync = () => onSync(dir, sync);
    return handle;
  });
  return { closed, restore: () => spy.mockRestore() };
}

describe('local driver', () => {
  test('put, get, ranged get, head, copy, delete', async () => {
    const d = driver();
    const key = newStorageKey();
    expect(await d.put(key, from('hello ', 'world'))).toEqual({ size: 11 });
    expect(await text(await d.get(key))).toBe('hello world');
    expect(await text(await d.get(key, { start: 6, end: 11 }))).toBe('world');
    expect(await text(await d.get(key, { start: 3, end: 3 }))).toBe('');
    await expect(d.get(key, { start: 6, end: 12 })).rejects.toBeInstanceOf(RangeNotSatisfiableError);
    expect((await d.head(key))!.size).toBe(11);
    const copy = newStorageKey();
    await d.copy(key, copy);
    expect(await text(await d.get(copy))).toBe('hello world');
    expect(await d.delete(key)).toBe(true);
    expect(await d.delete(key)).toBe(false);
    expect(await d.head(key)).toBeNull();
    await expect(d.get(key)).rejects.toBeInstanceOf(StorageNotFoundError);
    await expect(d.copy(key, newStorageKey())).rejects.toBeInstanceOf(StorageNotFoundError);
    expect(tempFiles(d)).toEqual([]);
  });

  test('objects are sharded by key prefix', async () => {
    const d = driver();
    const key = 'AbCdEfGhIjKlMnOpQrSt';
    await d.put(key, from('x'));
    expect(fs.existsSync(path.join(d.root, 'Ab', 'Cd', key))).toBe(true);
  });

  test('a shard directory removed after a write there is made again by the next write into it', async () => {
    const d = driver();
    const first = newStorageKey();
    await d.put(first, from('one'));
    const shard = path.join(d.root, first.slice(0, 2));
    fs.rmSync(shard, { recursive: true });
    const second = `${first.slice(0, 4)}${newStorageKey().slice(4)}`;
    expect(await d.put(second, from('two'))).toEqual({ size: 3 });
    expect(await text(await d.get(second))).toBe('two');
    expect(tempFiles(d)).toEqual([]);
  });

  test('only the latest shard directories are remembered: a write into a forgotten one makes it again, into a remembered one does not', async () => {
    const d = driver(2);
    const inShard = (shard: string) => `${shard}${newStorageKey().slice(4)}`;
    const mkdirs = spyOn(fsp, 'mkdir');
    try {
      for (const shard of ['AAaa', 'BBbb', 'CCcc']) await d.put(inShard(shard), from('x'), { fresh: true });
      expect(mkdirs).toHaveBeenCalledTimes(3);
      await d.put(inShard('CCcc'), from('x'), { fresh: true });
      await d.put(inShard('BBbb'), from('x'), { fresh: true });
      expect(mkdirs).toHaveBeenCalledTimes(3);
      await d.put(inShard('AAaa'), from('x'), { fresh: true });
      expect(mkdirs).toHaveBeenCalledTimes(4);
      expect(mkdirs.mock.calls[3]![0]).toBe(path.join(d.root, 'AA', 'aa'));
    } finally {
      mkdirs.mockRestore();
    }
  });

  test("a new shard or staging directory's entry is synced into each parent it was made in", async () => {
    const d = driver();
    const synced: string[] = [];
    const realOpen = fsp.open;
    const spy = spyOn(fsp, 'open').mockImplementation(async (file, flags, mode) => {
      const handle = await realOpen(file, flags, mode);
      if (flags === 'r') synced.push(path.relative(d.root, String(file)) || '.');
      return handle;
    });
    try {
      // The new folders into their parents as they are made, the folder after the object's entry is in it.
      await d.put('AAaa' + newStorageKey().slice(4), from('x'), { fresh: true });
      expect(synced).toEqual(['AA', '.', path.join('AA', 'aa')]);
      synced.length = 0;
      await d.put('AAbb' + newStorageKey().slice(4), from('x'));
      expect(synced).toEqual(['AA', path.join('AA', 'bb')]);
      synced.length = 0;
      await d.put('AAbb' + newStorageKey().slice(4), from('x'));
      expect(synced).toEqual([path.join('AA', 'bb')]);
      synced.length = 0;
      await d.staging.write(newStorageKey(), 0, from('x'));
      expect(synced).toEqual(['.staging', '.']);
    } finally {
      spy.mockRestore();
    }
  });

  test('atomic write: a failing stream leaves no object and no temp file', async () => {
    const d = driver();
    const key = newStorageKey();
    async function* failing() {
      yield Buffer.alloc(2 * 1024 * 1024, 1);
      throw new Error('client went away');
    }
    await expect(d.put(key, failing())).rejects.toThrow('client went away');
    expect(await d.head(key)).toBeNull();
    expect(tempFiles(d)).toEqual([]);
  });

  test('atomic write: nothing is visible under the key until the write completes', async () => {
    const d = driver();
    const key = newStorageKey();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    async function* slow() {
      yield Buffer.alloc(2 * 1024 * 1024, 7);
      await gate;
      yield Buffer.from('end');
    }
    const writing = d.put(key, slow());
    await eventually(() => tempFiles(d).length > 0);
    expect(await d.head(key)).toBeNull();
    expect(tempFiles(d).length).toBe(1);
    release();
    await writing;
    expect((await d.head(key))!.size).toBe(2 * 1024 * 1024 + 3);
  });

  test('a fresh key is written in place: no temp file, the object whole after, a failing stream leaves nothing', async () => {
    const d = driver();
    const key = newStorageKey();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    async function* slow() {
      yield Buffer.alloc(2 * 1024 * 1024, 7);
      await gate;
      yield Buffer.from('end');
    }
    const writing = d.put(key, slow(), { fresh: true });
    await eventually(() => fs.existsSync(d.pathOf(key)));
    expect(tempFiles(d)).toEqual([]);
    release();
    expect(await writing).toEqual({ size: 2 * 1024 * 1024 + 3 });
    expect((await d.head(key))!.size).toBe(2 * 1024 * 1024 + 3);

    const failed = newStorageKey();
    async function* failing() {
      yield Buffer.alloc(2 * 1024 * 1024, 1);
      throw new Error('client went away');
    }
    await expect(d.put(failed, failing(), { fresh: true })).rejects.toThrow('client went away');
    expect(await d.head(failed)).toBeNull();
    expect(tempFiles(d)).toEqual([]);
  });

  test('writes into a shard folder another write is making end only once the folder is synced into its parents', async () => {
    const d = driver();
    const events: string[] = [];
    const watch = watchOpens(d.root, 2, async (dir, sync) => {
      // The root's sync (the new folder's entry) holds until both objects are written, or a second at most.
      if (dir === '.') await Promise.race([watch.closed, Bun.sleep(1000)]);
      await sync();
      events.push(`${dir} synced`);
    });
    try {
      const keys = ['CCcc', 'CCcc'].map((shard) => shard + newStorageKey().slice(4));
      await Promise.all(keys.map(async (key, i) => d.put(key, from('x'), { fresh: true }).then(() => events.push(`put ${i}`))));
      const rootSynced = events.indexOf('. synced');
      expect(rootSynced).toBeGreaterThanOrEqual(0);
      expect(events.indexOf('put 0')).toBeGreaterThan(rootSynced);
      expect(events.indexOf('put 1')).toBeGreaterThan(rootSynced);
      expect(events.filter((e) => e === 'CC synced')).toHaveLength(1);
    } finally {
      watch.restore();
    }
  });

  test('fresh objects put at once into one folder share its syncs; each put ends after a sync its file was in', async () => {
    const d = driver();
    const first = newStorageKey();
    // The folder made first: the puts below sync it and nothing else.
    await d.put(first, from('x'), { fresh: true });
    const keys = Array.from({ length: 8 }, () => `${first.slice(0, 4)}${newStorageKey().slice(4)}`);
    const folder = path.dirname(d.pathOf(first));
    const syncedWith: Set<string>[] = [];
    const watch = watchOpens(d.root, keys.length, async (_dir, sync) => {
      // The first sync holds until every put has asked for one: the others ask while it runs.
      if (syncedWith.length === 0) await asked;
      const entries = new Set(fs.readdirSync(folder));
      await sync();
      syncedWith.push(entries);
    });
    // Every file written and closed, and a turn for each put to ask for its folder's sync.
    const asked = watch.closed.then(() => new Promise((r) => setImmediate(r)));
    try {
      const covered = await Promise.all(
        keys.map(async (key) => {
          await d.put(key, from(key), { fresh: true });
          return syncedWith.some((entries) => entries.has(key));
        }),
      );
      expect(covered).toEqual(keys.map(() => true));
      expect(syncedWith.length).toBe(2);
      for (const key of keys) expect(await text(await d.get(key))).toBe(key);
    } finally {
      watch.restore();
    }
  });

  test('a fresh key that exists is refused and the object there kept; a removed shard directory is made again', async () => {
    const d = driver();
    const key = newStorageKey();
    await d.put(key, from('kept'));
    await expect(d.put(key, from('other'), { fresh: true })).rejects.toMatchObject({ code: 'EEXIST' });
    expect(await text(await d.get(key))).toBe('kept');
    fs.rmSync(path.join(d.root, key.slice(0, 2)), { recursive: true });
    const next = `${key.slice(0, 4)}${newStorageKey().slice(4)}`;
    expect(await d.put(next, from('two'), { fresh: true })).toEqual({ size: 3 });
    expect(await text(await d.get(next))).toBe('two');
  });

  test('an aborted signal stops the write and cleans up', async () => {
    const d = driver();
    const ac = new AbortController();
    async function* endless() {
      for (let i = 0; ; i++) {
        if (i === 3) ac.abort();
        yield Buffer.alloc(1024);
      }
    }
    await expect(d.put(newStorageKey(), endless(), { signal: ac.signal })).rejects.toThrow();
    expect(tempFiles(d)).toEqual([]);
  });

  test('a write past the write-behind size: complete and byte-exact; aborted with a background flush in flight: nothing left', async () => {
    const d = driver();
    const block = Buffer.alloc(1024 * 1024);
    for (let i = 0; i < block.length; i += 4096) block.writeUInt32BE(i, i);
    async function* mib(count: number, onEach?: (i: number) => void) {
      for (let i = 0; i < count; i++) {
        onEach?.(i);
        yield block;
      }
    }
    const key = newStorageKey();
    expect(await d.put(key, mib(150))).toEqual({ size: 150 * block.length });
    const stored = fs.readFileSync(d.pathOf(key));
    expect(stored.length).toBe(150 * block.length);
    expect(stored.subarray(149 * block.length).equals(block)).toBe(true);
    const ac = new AbortController();
    await expect(
      d.put(
        newStorageKey(),
        mib(150, (i) => i === 70 && ac.abort()),
        { signal: ac.signal },
      ),
    ).rejects.toThrow();
    expect(tempFiles(d)).toEqual([]);
  });

  test('batches written while the next one gathers land in order, byte-exact', async () => {
    const d = driver();
    const chunks = Array.from({ length: 70 }, (_, i) => Buffer.alloc(300 * 1024 + i, i + 1));
    async function* distinct() {
      for (const chunk of chunks) {
        yield chunk;
        // A pause now and then lets a write finish before the next batch is full, as a slow client would.
        if (chunk[0]! % 9 === 0) await Bun.sleep(1);
      }
    }
    const key = newStorageKey();
    await d.put(key, distinct());
    expect(fs.readFileSync(d.pathOf(key)).equals(Buffer.concat(chunks))).toBe(true);
  });

  describe('reads', () => {
    const MiB = 1024 * 1024;
    // Distinct bytes over several read-ahead chunks and a short last one.
    const content = Buffer.from(Array.from({ length: 3.5 * MiB + 1000 }, (_, i) => (i * 7 + (i >> 16)) & 255));
    async function stored() {
      const d = driver();
      const key = newStorageKey();
      await d.put(
        key,
        (async function* () {
          yield content;
        })(),
      );
      return { d, key, file: d.pathOf(key) };
    }
    const bytes = async (s: ReadableStream<Uint8Array>) => Buffer.from(await new Response(s).arrayBuffer());
    const isOpen = (file: string) => openPaths().includes(file);

    test('whole objects and ranges across chunk boundaries are byte-exact, and the file is closed after', async () => {
      const { d, key, file } = await stored();
      expect((await bytes(await d.get(key))).equals(content)).toBe(true);
      for (const [start, end] of [
        [0, 1],
        [MiB - 1, MiB + 1],
        [MiB, 2 * MiB],
        [5, 3 * MiB + 17],
        [content.length - 1, content.length],
        [2 * MiB + 3, content.length],
      ] as const) {
        expect((await bytes(await d.get(key, { start, end }))).equals(content.subarray(start, end))).toBe(true);
      }
      expect(isOpen(file)).toBe(false);
    });

    test('a read lets other work run between chunks instead of holding the thread to the end', async () => {
      const { d, key } = await stored();
      const stream = await d.get(key);
      let read = 0;
      let readWhenLoopTurned = -1;
      // The next turn of the event loop, whenever it comes: a timer's 1 ms can outlast a warm 3.5 MiB read.
      setImmediate(() => (readWhenLoopTurned = read));
      for await (const chunk of stream) read += chunk.byteLength;
      expect(readWhenLoopTurned).toBeGreaterThanOrEqual(0);
      expect(readWhenLoopTurned).toBeLessThan(content.length);
    });

    test('cancelling part-way, or while the first read is in flight, closes the file', async () => {
      const { d, key, file } = await stored();
      const partWay = (await d.get(key)).getReader();
      await partWay.read();
      expect(isOpen(file)).toBe(true);
      await partWay.cancel();
      expect(isOpen(file)).toBe(false);
      const atOnce = (await d.get(key)).getReader();
      const first = atOnce.read();
      await atOnce.cancel();
      await first;
      await eventually(() => expect(isOpen(file)).toBe(false));
    });

    test('a stream dropped part-way without a cancel still closes its file', async () => {
      const { d, key, file } = await stored();
      const readOneChunk = async () => {
        const reader = (await d.get(key)).getReader();
        await reader.read();
      };
      await readOneChunk();
      await eventually(
        () => {
          Bun.gc(true);
          return !isOpen(file);
        },
        // A full collection takes far longer on a loaded machine (one CI run under load missed 500 ms).
        { timeoutMs: 5000, intervalMs: 10 },
      );
      expect(isOpen(file)).toBe(false);
    });

    test("openReader: reads at any offset into the caller's buffer, its size, the file closed by close()", async () => {
      const { d, key, file } = await stored();
      const reader = await d.openReader(key);
      expect(reader.size).toBe(content.length);
      const into = Buffer.alloc(MiB);
      expect(await reader.read(into, 10, MiB - 3)).toBe(10);
      expect(into.subarray(0, 10).equals(content.subarray(MiB - 3, MiB + 7))).toBe(true);
      expect(await reader.read(into, 10, content.length)).toBe(0);
      expect(isOpen(file)).toBe(true);
      await reader.close();
      expect(isOpen(file)).toBe(false);
      await expect(d.openReader(newStorageKey())).rejects.toBeInstanceOf(StorageNotFoundError);
    });

    test('openReader: a reader dropped without close() still closes its file', async () => {
      const { d, key, file } = await stored();
      const readOnce = async () => {
        const reader = await d.openReader(key);
        await reader.read(Buffer.alloc(16), 16, 0);
      };
      await readOnce();
      await eventually(
        () => {
          Bun.gc(true);
          return !isOpen(file);
        },
        { timeoutMs: 5000, intervalMs: 10 },
      );
      expect(isOpen(file)).toBe(false);
    });

    test('a file cut short after it was opened ends the stream at what is there', async () => {
      const { d, key, file } = await stored();
      const stream = await d.get(key);
      fs.truncateSync(file, MiB + 5);
      expect((await bytes(stream)).equals(content.subarray(0, MiB + 5))).toBe(true);
    });
  });

  test.each([
    '../../etc/passwd',
    '..%2f..%2fx',
    'a/b/cdefghijklmnopq',
    '/absolute/path/aaaaaaa',
    'short',
    '.hiddenaaaaaaaaaaaaaa',
    'with space aaaaaaaaaa',
    'x'.repeat(129),
  ])('path traversal and malformed key %p are rejected', async (key) => {
    const d = driver();
    await expect(d.put(key, from('x'))).rejects.toBeInstanceOf(InvalidStorageKeyError);
    await expect(d.get(key)).rejects.toBeInstanceOf(InvalidStorageKeyError);
    await expect(d.head(key)).rejects.toBeInstanceOf(InvalidStorageKeyError);
    await expect(d.delete(key)).rejects.toBeInstanceOf(InvalidStorageKeyError);
    await expect(d.copy(newStorageKey(), key)).rejects.toBeInstanceOf(InvalidStorageKeyError);
  });

  test('list streams every object with size and mtime, skipping temp files and strays', async () => {
    const d = driver();
    const keys = Array.from({ length: 25 }, () => newStorageKey());
    for (const [i, k] of keys.entries()) await d.put(k, from('x'.repeat(i)));
    fs.writeFileSync(path.join(d.root, '.tmp', 'leftover.abc'), 'junk');
    fs.mkdirSync(path.join(d.root, 'zz', 'yy'), { recursive: true });
    fs.writeFileSync(path.join(d.root, 'zz', 'yy', 'not a key!'), 'junk');
    const seen = new Map<string, number>();
    for await (const o of d.list()) {
      seen.set(o.key, o.size);
      expect(o.lastModified).toBeInstanceOf(Date);
    }
    expect(seen.size).toBe(25);
    for (const [i, k] of keys.entries()) expect(seen.get(k)).toBe(i);
  });

  test('cleanupTempFiles removes what a crash left in .tmp, not a write still under way', async () => {
    const d = driver();
    const crashed = path.join(d.root, '.tmp', 'crashed.1');
    fs.writeFileSync(crashed, 'x');
    // A minute old: a file's time can read a fraction of a millisecond ahead of Date.now() just after it is written.
    const minuteAgo = new Date(Date.now() - 60_000);
    fs.utimesSync(crashed, minuteAgo, minuteAgo);
    fs.writeFileSync(path.join(d.root, '.tmp', 'writing.2'), 'x');
    expect(await cleanupTempFiles(d.root, 30_000)).toBe(1);
    expect(tempFiles(d)).toEqual(['writing.2']);
  });
});
