import { randomBytes } from 'node:crypto';
import { davLogin } from '../helpers/dav.ts';
import { folder, storedKeys, uploadRaw } from '../helpers/files.ts';
import { admin, owner } from '../helpers/seed.ts';
import type { TestServer } from '../helpers/server.ts';
import { createUpload, patchUpload } from '../helpers/tus.ts';
import { Rng } from './random.ts';

export interface RacesSummary {
  seed: number;
  /** Requests answered, by lane and operation, then by status. */
  statuses: Record<string, Record<number, number>>;
  /** Answers of 500 or more, requests that threw, and every broken invariant of the tree at the end. */
  problems: string[];
}

// Few names, so that the lanes collide: files and folders, two of them differing only in case.
const FILE_NAMES = ['a', 'b', 'A', 'c.txt'];
const FOLDER_NAMES = ['d', 'e', 'D'];

type Row = { id: string; parentId: string | null; type: 'file' | 'folder'; name: string };
type Op = () => Promise<Response | null>;

/**
 * Lanes at once on one account's few names, each through its own door: two through the API (upload,
 * replace, folder, rename, move, copy job, trash, restore, delete for good, tus with and without a file
 * to replace), two through WebDAV (PUT, MKCOL, MOVE and COPY with and without Overwrite, DELETE, the
 * Nextcloud chunked upload's final MOVE), and a member of a shared folder through the API inside it.
 * Each operation picks its items from the database as it is when the operation starts. At the end,
 * once the queued jobs ran, the tree's invariants (`treeProblems`) must hold.
 */
export async function runRaces(t: TestServer, opts: { seed: number; opsPerLane: number }): Promise<RacesSummary> {
  const rng = new Rng(opts.seed);
  const own = await admin(t);
  const member = await owner(t);
  const dav = await davLogin(t, own);
  const db = t.server.ctx.db.$client;
  const share = await folder(own.client, 'shared');
  const added = await own.client.post(`/api/files/${share.id}/members`, { email: member.email, role: 'editor' });
  if (added.status !== 201) throw new Error(`share: ${added.status}`);

  const rows = (where: string) =>
    db
      .query<Row, [string, string]>(`SELECT id, parent_id AS parentId, type, name FROM items WHERE account_id = ? AND id <> ? AND ${where}`)
      .all(own.id, share.id);
  const parentOf = db.query<{ parentId: string | null; name: string }, [string]>(
    'SELECT parent_id AS parentId, name FROM items WHERE id = ?',
  );
  const insideShare = (id: string | null) => {
    for (let at = id, depth = 0; at && depth < 64; depth++) {
      if (at === share.id) return true;
      at = parentOf.get(at)?.parentId ?? null;
    }
    return false;
  };
  const live = (inShare: boolean, type?: Row['type']) =>
    rows('deleted_at IS NULL').filter((r) => (!type || r.type === type) && (!inShare || insideShare(r.parentId)));
  const pickLive = (inShare: boolean, type?: Row['type']) => {
    const found = live(inShare, type);
    return found.length ? rng.pick(found) : null;
  };
  const pickFolder = (inShare: boolean): string | null => {
    const found = pickLive(inShare, 'folder');
    if (found && rng.chance(0.65)) return found.id;
    return inShare || rng.chance(0.5) ? share.id : null;
  };
  const trashRoots = () => rows('deleted_at IS NOT NULL AND deleted_root_id = id');
  const pathOf = (id: string | null) => {
    const parts: string[] = [];
    for (let at = id; at; ) {
      const row = parentOf.get(at);
      if (!row) break;
      parts.unshift(encodeURIComponent(row.name));
      at = row.parentId;
    }
    return parts.join('/');
  };
  const pathIn = (parentId: string | null, name: string) => [pathOf(parentId), encodeURIComponent(name)].filter(Boolean).join('/');
  const anyName = () => rng.pick(rng.chance(0.5) ? FILE_NAMES : FOLDER_NAMES);
  const content = () => randomBytes(rng.int(0, 3000));

  const api = (client: typeof own.client, inShare: boolean): Record<string, Op> => ({
    upload: async () => {
      const parentId = pickFolder(inShare);
      return uploadRaw(client, rng.pick(FILE_NAMES), content(), parentId ? { parentId } : {});
    },
    replace: async () => {
      const file = pickLive(inShare, 'file');
      if (!file) return null;
      const form = new FormData();
      form.append('file', new File([content()], file.name));
      return client.request(`/api/files/${file.id}/replace`, { method: 'POST', body: form });
    },
    folder: async () => client.post('/api/files/folder', { name: rng.pick(FOLDER_NAMES), parentId: pickFolder(inShare) }),
    rename: async () => {
      const item = pickLive(inShare);
      return item && client.post('/api/files/rename', { id: item.id, name: rng.pick(item.type === 'file' ? FILE_NAMES : FOLDER_NAMES) });
    },
    move: async () => {
      const item = pickLive(inShare);
      return item && client.post('/api/files/move', { ids: [item.id], parentId: pickFolder(inShare) });
    },
    copy: async () => {
      const item = pickLive(inShare);
      return item && client.post('/api/files/copy', { ids: [item.id], parentId: pickFolder(inShare) });
    },
    trash: async () => {
      const item = pickLive(inShare);
      return item && client.post('/api/files/delete', { ids: [item.id] });
    },
    restore: async () => {
      const roots = inShare ? [] : trashRoots();
      return roots.length ? client.post('/api/files/trash/restore', { ids: [rng.pick(roots).id] }) : null;
    },
    purge: async () => {
      const roots = inShare ? [] : trashRoots();
      return roots.length ? client.post('/api/files/trash/delete', { ids: [rng.pick(roots).id] }) : null;
    },
    tus: async () => {
      const bytes = content();
      const replaced = rng.chance(0.3) ? pickLive(inShare, 'file') : null;
      const parentId = pickFolder(inShare);
      const meta: Record<string, string> = { filename: rng.pick(FILE_NAMES) };
      if (replaced) meta.replaceId = replaced.id;
      else if (parentId) meta.parentId = parentId;
      const created = await createUpload(client, bytes.length, meta);
      if (created.status !== 201) return created;
      return patchUpload(client, new URL(created.headers.get('location')!, t.url).pathname, 0, bytes);
    },
  });

  const destination = () => `${t.url}/dav/${pathIn(pickFolder(false), anyName())}`;
  const overwrite = () => (rng.chance(0.5) ? 'T' : 'F');
  const webdav: Record<string, Op> = {
    put: async () => dav.put(pathIn(pickFolder(false), rng.pick(FILE_NAMES)), content()),
    mkcol: async () => dav.request('MKCOL', pathIn(pickFolder(false), anyName())),
    move: async () => {
      const item = pickLive(false);
      return item && dav.request('MOVE', pathOf(item.id), { headers: { destination: destination(), overwrite: overwrite() } });
    },
    copy: async () => {
      const item = pickLive(false);
      return item && dav.request('COPY', pathOf(item.id), { headers: { destination: destination(), overwrite: overwrite() } });
    },
    delete: async () => {
      const item = pickLive(false);
      return item && dav.request('DELETE', pathOf(item.id));
    },
    chunked: async () => {
      const base = `${t.url}/remote.php/dav`;
      const transfer = `${base}/uploads/${own.id}/t${rng.int(0, 1e9)}`;
      const headers = { authorization: dav.authorization };
      const target = `${base}/files/${own.id}/${pathIn(pickFolder(false), rng.pick(FILE_NAMES))}`;
      const bytes = content();
      const made = await fetch(transfer, { method: 'MKCOL', headers: { ...headers, destination: target } });
      if (made.status !== 201) return made;
      const half = bytes.length >> 1;
      for (const [name, part] of [
        ['1', bytes.subarray(0, half)],
        ['2', bytes.subarray(half)],
      ] as const) {
        const res = await fetch(`${transfer}/${name}`, { method: 'PUT', headers, body: part });
        if (res.status !== 201) return res;
      }
      return fetch(`${transfer}/.file`, {
        method: 'MOVE',
        headers: { ...headers, destination: target, 'oc-total-length': String(bytes.length) },
      });
    },
  };

  const lanes: Array<[string, Record<string, Op>]> = [
    ['api', api(own.client, false)],
    ['api2', api(own.client, false)],
    ['dav', webdav],
    ['dav2', webdav],
    ['member', api(member.client, true)],
  ];
  const statuses: RacesSummary['statuses'] = {};
  const problems: string[] = [];
  await Promise.all(
    lanes.map(async ([lane, ops]) => {
      for (let i = 0; i < opts.opsPerLane; i++) {
        const op = rng.pick(Object.keys(ops));
        try {
          const res = await ops[op]!();
          if (!res) continue;
          const byStatus = (statuses[`${lane}.${op}`] ??= {});
          byStatus[res.status] = (byStatus[res.status] ?? 0) + 1;
          const body = await res.text();
          if (res.status >= 500) problems.push(`${lane}.${op}: ${res.status} ${body.slice(0, 200)}`);
        } catch (err) {
          problems.push(`${lane}.${op} threw ${err}`);
        }
      }
    }),
  );
  await t.server.worker.drain();
  problems.push(...(await treeProblems(t)));
  return { seed: opts.seed, statuses, problems };
}

/**
 * The tree's invariants, read from the database and the store: every live item sits in a live folder of
 * its account, no item is below itself, live names are unique per folder (any case), a trashed item
 * that is not a trash entry of its own is in its parent's trash entry, each live folder's tree size (and
 * each account's root size) is the sum of the live files below it, each owner's usage counter is its
 * files' and versions' bytes, each version belongs to a file, every file row's object is in the store,
 * and every object in the store belongs to a file, a version, an upload in progress or an upload intent.
 */
async function treeProblems(t: TestServer): Promise<string[]> {
  const db = t.server.ctx.db.$client;
  const all = <T>(sql: string) => db.query<T, []>(sql).all();
  const out: string[] = [];
  for (const r of all<{ id: string; name: string }>(
    `SELECT c.id, c.name FROM items c LEFT JOIN items p ON p.id = c.parent_id
     WHERE c.deleted_at IS NULL AND c.parent_id IS NOT NULL
       AND (p.id IS NULL OR p.deleted_at IS NOT NULL OR p.type <> 'folder' OR p.account_id <> c.account_id)`,
  ))
    out.push(`live ${r.name} (${r.id}) is not in a live folder of its account`);
  for (const r of all<{ id: string }>(
    `WITH RECURSIVE up(start, id, depth) AS (
       SELECT id, parent_id, 1 FROM items WHERE parent_id IS NOT NULL
       UNION ALL SELECT up.start, i.parent_id, depth + 1 FROM items i JOIN up ON i.id = up.id WHERE i.parent_id IS NOT NULL AND depth < 64)
     SELECT DISTINCT start AS id FROM up WHERE id = start OR depth >= 64`,
  ))
    out.push(`${r.id} is below itself`);
  for (const r of all<{ nameKey: string; n: number }>(
    `SELECT name_key AS nameKey, COUNT(*) AS n FROM items WHERE deleted_at IS NULL GROUP BY account_id, parent_id, name_key HAVING n > 1`,
  ))
    out.push(`${r.n} live items named ${r.nameKey} in one folder`);
  for (const r of all<{ id: string; name: string }>(
    `SELECT c.id, c.name FROM items c LEFT JOIN items p ON p.id = c.parent_id
     WHERE c.deleted_at IS NOT NULL AND c.deleted_root_id <> c.id
       AND (p.id IS NULL OR p.deleted_at IS NULL OR p.deleted_root_id IS NOT c.deleted_root_id)`,
  ))
    out.push(`trashed ${r.name} (${r.id}) is not in its parent's trash entry`);
  for (const r of all<{ name: string; counted: number; actual: number }>(
    `WITH RECURSIVE down(root, id) AS (
       SELECT id, id FROM items WHERE type = 'folder' AND deleted_at IS NULL
       UNION ALL SELECT down.root, i.id FROM items i JOIN down ON i.parent_id = down.id WHERE i.deleted_at IS NULL)
     SELECT f.name, f.tree_size AS counted,
       (SELECT COALESCE(SUM(i.size), 0) FROM down JOIN items i ON i.id = down.id WHERE down.root = f.id AND i.type = 'file') AS actual
     FROM items f WHERE f.type = 'folder' AND f.deleted_at IS NULL`,
  ))
    if (r.counted !== r.actual) out.push(`folder ${r.name} counts ${r.counted} bytes below it, holds ${r.actual}`);
  for (const r of all<{ accountId: string; counted: number; actual: number }>(
    `SELECT v.account_id AS accountId, v.size AS counted,
       (SELECT COALESCE(SUM(size), 0) FROM items i WHERE i.account_id = v.account_id AND i.type = 'file' AND i.deleted_at IS NULL) AS actual
     FROM tree_versions v`,
  ))
    if (r.counted !== r.actual) out.push(`root of ${r.accountId} counts ${r.counted} bytes, holds ${r.actual}`);
  for (const r of all<{ id: string; used: number; actual: number }>(
    `SELECT u.id, u.storage_used AS used,
       (SELECT COALESCE(SUM(size), 0) FROM items i WHERE i.account_id = u.id AND i.type = 'file')
       + (SELECT COALESCE(SUM(size), 0) FROM file_versions v WHERE v.account_id = u.id) AS actual
     FROM users u WHERE u.parent_user_id IS NULL`,
  ))
    if (r.used !== r.actual) out.push(`usage of ${r.id} is ${r.used}, its files and versions hold ${r.actual}`);
  for (const r of all<{ id: string }>(
    `SELECT id FROM file_versions v WHERE NOT EXISTS (SELECT 1 FROM items i WHERE i.id = v.item_id AND i.type = 'file')`,
  ))
    out.push(`version ${r.id} belongs to no file`);
  const stored = new Set(await storedKeys(t));
  const rowKeys = all<{ key: string }>(
    `SELECT storage_key AS key FROM items WHERE storage_key IS NOT NULL UNION ALL SELECT storage_key FROM file_versions`,
  ).map((r) => r.key);
  for (const key of rowKeys) if (!stored.has(key)) out.push(`object ${key} of a file or version is missing`);
  const owned = new Set([
    ...rowKeys,
    ...all<{ key: string }>(
      `SELECT storage_key AS key FROM upload_chunks WHERE storage_key IS NOT NULL
       UNION ALL SELECT storage_key FROM chunked_uploads WHERE storage_key IS NOT NULL
       UNION ALL SELECT storage_key FROM tus_uploads UNION ALL SELECT storage_key FROM upload_intents`,
    ).map((r) => r.key),
  ]);
  for (const key of stored) if (!owned.has(key)) out.push(`object ${key} belongs to nothing`);
  return out;
}
