import fs from 'node:fs';
import path from 'node:path';
import { createCipheriv, randomBytes } from 'node:crypto';
import { Database, type Statement } from 'bun:sqlite';
import { embeddedMigrations } from '../src/db/migrations.ts';
import { newId } from '../src/lib/ids.ts';
import { sealSegments } from './bare-seal.ts';

/**
 * The floor of a small upload with Coffer's guarantees, compiled with `bun build --compile` as Coffer is: the bare
 * reference (`bare-durable.ts`, the same routes: PUT raw, POST multipart field `file`, POST /bulk field `files`) with
 * each guarantee added in turn, chosen by `--step`, so each step's cost shows beside the one before:
 *
 * - `durable`: write to a temporary name, fsync, rename into one of 4,096 folders, fsync the folder.
 * - `sealed`: + the body sealed as Coffer's format (a 16-byte header, AES-256-GCM per 64 KiB segment with a fresh
 *   data key per file) and the data key wrapped by a master key (AES-256-GCM), as `SealedStore.put` does.
 * - `row`: + one row per file (id, name, size, storage key, wrapped key) committed in its own `BEGIN IMMEDIATE`
 *   in a SQLite database opened as `src/db/client.ts` opens Coffer's (WAL, `synchronous = NORMAL`, SQLite's
 *   automatic checkpoint at 1,000 pages) before the answer.
 * - `indexed`: the row is an `items` row of Coffer's own schema (its migrations applied: every index, the name
 *   index's FTS row and the triggers), with the account root's tree mark, the change-log row and the usage counter,
 *   each file in its own transaction.
 * - `grouped`: the same statements, committed as Coffer's `Transactions.grouped` commits them: every upload whose
 *   row is ready in one turn of the event loop in one `BEGIN IMMEDIATE`, each in its own savepoint, waiting 1 ms for
 *   the others while more than one upload is in progress; a bulk request's rows in chunks of 100 per transaction.
 * - `intent`: + the upload intent Coffer commits (grouped) before an object's first byte and deletes with its row,
 *   so a crash between the two leaves a record of the object to remove.
 *
 * No auth, no quota check, no type detection, no audit record, no event, no framework. Run as
 * `bare-floor serve --port <port> --host 127.0.0.1 --data-dir <dir> --step <step>`, as `coffer serve` is started.
 */
const STEPS = ['durable', 'sealed', 'row', 'indexed', 'grouped', 'intent'] as const;
const arg = (name: string) => process.argv[process.argv.indexOf(name) + 1]!;
const root = arg('--data-dir');
const level = STEPS.indexOf(arg('--step') as (typeof STEPS)[number]);
if (level < 0) throw new Error(`--step is one of ${STEPS.join(', ')}`);
const sealing = level >= 1;
const rows = level >= 2;
const indexed = level >= 3;
const grouping = level >= 4;
const intents = level >= 5;
fs.mkdirSync(path.join(root, 'tmp'), { recursive: true });
let n = 0;

const masterKey = randomBytes(32);
const MASTER_ID = randomBytes(4).toString('hex');

/** The data key wrapped as `Keyring.wrap` does: AES-256-GCM under the master key, base64url with the key's id. */
function wrap(dataKey: Buffer): string {
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', masterKey, iv);
  const sealed = Buffer.concat([iv, c.update(dataKey), c.final(), c.getAuthTag()]);
  return `k1.${MASTER_ID}.${sealed.toString('base64url')}`;
}

async function* once(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  yield bytes;
}

/** The file's bytes as stored: plain, or Coffer's header and sealed segments. */
async function stored(bytes: Uint8Array): Promise<{ pieces: Uint8Array[]; wrappedKey: string | null }> {
  if (!sealing) return { pieces: [bytes], wrappedKey: null };
  const dataKey = randomBytes(32);
  const header = Buffer.alloc(16);
  header.write('CFSE', 0, 'latin1');
  header[4] = 1;
  header[5] = 16;
  randomBytes(7).copy(header, 8);
  const pieces: Uint8Array[] = [header];
  for await (const piece of sealSegments(once(bytes), dataKey, header.subarray(8, 16))) pieces.push(piece);
  return { pieces, wrappedKey: wrap(dataKey) };
}

async function write(key: string, pieces: Uint8Array[]): Promise<void> {
  const id = n++;
  const temp = path.join(root, 'tmp', key);
  const handle = await fs.promises.open(temp, 'wx', 0o600);
  await handle.writev(pieces);
  await handle.sync();
  await handle.close();
  const target = path.join(root, String(id % 4096));
  await fs.promises.mkdir(target, { recursive: true });
  await fs.promises.rename(temp, path.join(target, key));
  const dir = await fs.promises.open(target, 'r');
  await dir.sync();
  await dir.close();
}

const sqlite = rows ? new Database(path.join(root, 'floor.db'), { create: true, strict: true }) : null;
const ACCOUNT = newId();
let statements: Record<string, Statement> = {};
if (sqlite) {
  sqlite.run('PRAGMA busy_timeout = 5000');
  sqlite.run('PRAGMA journal_mode = WAL');
  sqlite.run('PRAGMA synchronous = NORMAL');
  sqlite.run('PRAGMA foreign_keys = ON');
  sqlite.run('PRAGMA temp_store = MEMORY');
  if (indexed) {
    sqlite.transaction(() => {
      for (const m of embeddedMigrations)
        for (const statement of m.sql.split('--> statement-breakpoint').map((s) => s.trim())) if (statement) sqlite.run(statement);
    })();
    const now = Date.now();
    sqlite
      .query('INSERT INTO users (id, email, email_key, created_at, updated_at) VALUES (?, ?, ?, ?, ?)')
      .run(ACCOUNT, 'floor@example.test', 'floor@example.test', now, now);
    statements = {
      item: sqlite.prepare(
        `INSERT INTO items (id, account_id, parent_id, type, name, name_key, size, mime_type, storage_key, wrapped_key, key_id, starred,
           modified_at, accessed_at, created_at, content_source, content_author_id)
         VALUES (?, ?, NULL, 'file', ?, ?, ?, 'application/octet-stream', ?, ?, ?, 0, ?, ?, ?, 'upload', ?) RETURNING *`,
      ),
      root: sqlite.prepare(
        'INSERT INTO tree_versions (account_id, version, size) VALUES (?1, 1, ?2) ON CONFLICT (account_id) DO UPDATE SET version = version + 1, size = size + ?2',
      ),
      change: sqlite.prepare(
        `INSERT INTO changes (at, account_id, actor_kind, actor_id, kind, item_id, item_row, item_type, name_before, parent_before, name_after, parent_after, details)
         VALUES (?1, ?2, 'login', ?2, 'created', ?3, (SELECT seq FROM items WHERE id = ?3), 'file', NULL, NULL, ?4, NULL, ?5)`,
      ),
      usage: sqlite.prepare('UPDATE users SET storage_used = MAX(0, storage_used + ?) WHERE id = ?'),
      intent: sqlite.prepare('INSERT INTO upload_intents (storage_key, created_at) VALUES (?, ?)'),
      cleared: sqlite.prepare('DELETE FROM upload_intents WHERE storage_key = ?'),
    };
  } else {
    sqlite.run(
      'CREATE TABLE IF NOT EXISTS files (id TEXT PRIMARY KEY, name TEXT NOT NULL, size INTEGER NOT NULL, storage_key TEXT NOT NULL, wrapped_key TEXT)',
    );
    statements = {
      file: sqlite.prepare('INSERT INTO files (id, name, size, storage_key, wrapped_key) VALUES (?, ?, ?, ?, ?) RETURNING *'),
    };
  }
}
const transact = sqlite?.transaction((fn: () => unknown) => fn()) as
  | ((<T>(fn: () => T) => T) & { immediate<T>(fn: () => T): T })
  | undefined;

interface Uploaded {
  name: string;
  size: number;
  key: string;
  wrappedKey: string | null;
}

/** The file's row (and, from `indexed`, its tree mark, change-log row and usage), inside the caller's transaction. */
function insert(file: Uploaded): unknown {
  if (!indexed) return statements.file!.get(newId(), file.name, file.size, file.key, file.wrappedKey);
  const now = Date.now();
  const id = newId();
  statements.root!.run(ACCOUNT, file.size);
  const row = statements.item!.get(
    id,
    ACCOUNT,
    file.name,
    file.name.toLowerCase(),
    file.size,
    file.key,
    file.wrappedKey,
    MASTER_ID,
    now,
    now,
    now,
    ACCOUNT,
  );
  statements.change!.run(now, ACCOUNT, id, file.name, JSON.stringify({ size: file.size }));
  statements.usage!.run(file.size, ACCOUNT);
  if (intents) statements.cleared!.run(file.key);
  return row;
}

/** Coffer's group commit (`Transactions.grouped`): the writes asked for in one turn committed together. */
let group: Array<{ fn: () => unknown; resolve: (v: unknown) => void; reject: (e: unknown) => void }> = [];
let expected = 0;
function grouped(fn: () => unknown): Promise<unknown> {
  return new Promise((resolve, reject) => {
    if (group.length === 0) {
      if (expected > 1) setTimeout(commitGroup, 1);
      else setImmediate(commitGroup);
    }
    group.push({ fn, resolve, reject });
  });
}
function commitGroup(): void {
  const writes = group;
  group = [];
  const outcomes: Array<{ ok: boolean; value: unknown }> = [];
  try {
    transact!.immediate(() => {
      for (const w of writes) {
        try {
          outcomes.push({ ok: true, value: transact!(w.fn) });
        } catch (error) {
          outcomes.push({ ok: false, value: error });
        }
      }
    });
  } catch (error) {
    for (const w of writes) w.reject(error);
    return;
  }
  writes.forEach((w, i) => (outcomes[i]!.ok ? w.resolve(outcomes[i]!.value) : w.reject(outcomes[i]!.value)));
}

/** The object stored durably (its intent first, from `intent`); the row left to the caller. */
async function storeObject(name: string, bytes: Uint8Array): Promise<Uploaded> {
  const key = newId();
  if (intents) await grouped(() => statements.intent!.run(key, Date.now()));
  const { pieces, wrappedKey } = await stored(bytes);
  await write(key, pieces);
  return { name, size: bytes.byteLength, key, wrappedKey };
}

/** One upload: stored, then its row committed (alone, or with the others of its turn from `grouped`). */
async function uploadOne(name: string, bytes: Uint8Array): Promise<void> {
  const file = await storeObject(name, bytes);
  if (!rows) return;
  if (grouping) await grouped(() => insert(file));
  else transact!.immediate(() => insert(file));
}

/** Counted as an upload in progress from before its body is read, as `Transactions.announce` is called. */
async function announced<T>(work: () => Promise<T>): Promise<T> {
  expected++;
  try {
    return await work();
  } finally {
    expected--;
  }
}

/** A bulk request's files, up to 16 stored at once; rows per file, or (from `grouped`) in chunks of 100 at the end. */
async function uploadBulk(files: File[]): Promise<number> {
  const inFlight = new Set<Promise<void>>();
  const done: Uploaded[] = [];
  for (const file of files) {
    const one: Promise<void> = file
      .arrayBuffer()
      .then(async (bytes) => {
        if (!grouping) return uploadOne(file.name, new Uint8Array(bytes));
        done.push(await storeObject(file.name, new Uint8Array(bytes)));
      })
      .finally(() => inFlight.delete(one));
    inFlight.add(one);
    if (inFlight.size >= 16) await Promise.race(inFlight);
  }
  await Promise.all(inFlight);
  for (let i = 0; i < done.length; i += 100) {
    const chunk = done.slice(i, i + 100);
    transact!.immediate(() => {
      for (const file of chunk) insert(file);
    });
    await new Promise((resolve) => setImmediate(resolve));
  }
  return files.length;
}

Bun.serve({
  port: Number(arg('--port')),
  hostname: arg('--host'),
  async fetch(req) {
    if (req.method === 'GET') return new Response('ok');
    const url = new URL(req.url);
    if (req.method === 'POST' && url.pathname === '/bulk') {
      const count = await uploadBulk((await req.formData()).getAll('files') as File[]);
      return Response.json({ stored: count });
    }
    if (req.method === 'POST') {
      await announced(async () => {
        const file = (await req.formData()).get('file') as File;
        await uploadOne(file.name, new Uint8Array(await file.arrayBuffer()));
      });
      return Response.json({ stored: 1 });
    }
    await announced(async () => uploadOne(path.basename(url.pathname), new Uint8Array(await req.arrayBuffer())));
    return new Response(null, { status: 201 });
  },
});
