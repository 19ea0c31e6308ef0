import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { closeDatabase, openDatabase, type Db } from '../../src/db/client.ts';
import { migrate } from '../../src/db/migrate.ts';
import { ItemsRepo } from '../../src/db/repos/items.ts';
import { ThumbnailsRepo } from '../../src/db/repos/thumbnails.ts';
import { newId } from '../../src/lib/ids.ts';
import { THUMBNAIL_TYPES, VIDEO_TYPES } from '../../src/services/thumbnails/formats.ts';
import { itemsReadPlans } from '../helpers/query-plans.ts';
import { tempDir } from '../helpers/run-root.ts';

const fullScan = (plan: string[]) => plan.some((d) => /^SCAN (items|i)$/.test(d));

describe('the hot queries on items read the index meant for them (EXPLAIN QUERY PLAN)', () => {
  let dir: string;
  let db: Db;
  let repo: ItemsRepo;
  const account = 'acct';
  let folderId = '';
  let trashedFolderId = '';
  let storageKey = '';

  beforeAll(() => {
    dir = tempDir('coffer-plans-');
    db = openDatabase(path.join(dir, 'coffer.db'));
    migrate(db);
    const sqlite = db.$client;
    for (const u of [account, 'other']) {
      sqlite.run(`INSERT INTO users (id, email, email_key, created_at, updated_at) VALUES (?, ?, ?, 0, 0)`, [
        u,
        `${u}@x.test`,
        `${u}@x.test`,
      ]);
    }
    repo = new ItemsRepo(sqlite);
    sqlite.transaction(() => {
      for (const owner of [account, 'other']) {
        const folders = Array.from(
          { length: 10 },
          (_, f) => repo.insertFolder({ id: newId(), accountId: owner, parentId: null, name: `folder-${f}` }, 1000 + f).id,
        );
        for (let i = 0; i < 400; i++) {
          const mime = ['image/jpeg', 'text/plain', 'video/mp4', 'application/pdf'][i % 4]!;
          repo.insert({
            id: newId(),
            accountId: owner,
            parentId: i % 20 === 0 ? null : folders[i % folders.length]!,
            type: 'file',
            name: `file-${i}.bin`,
            size: i * 100,
            mimeType: mime,
            storageKey: newId(),
            wrappedKey: 'wrapped',
            keyId: 'k1',
            starred: i % 7 === 0,
            modifiedAt: 5000 + i,
            accessedAt: 9000 - i,
            createdAt: 5000 + i,
          });
        }
        if (owner === account) [folderId, trashedFolderId] = [folders[0]!, folders[1]!];
      }
    })();
    const members = repo.liveSubtreeIds(trashedFolderId);
    repo.markTrashed(trashedFolderId, trashedFolderId, 20_000);
    for (const id of members.filter((id) => id !== trashedFolderId)) repo.markTrashed(id, trashedFolderId, 20_000);
    storageKey = sqlite.query<{ k: string }, []>("SELECT storage_key AS k FROM items WHERE type = 'file' LIMIT 1").get()!.k;
  });

  afterAll(() => {
    closeDatabase(db);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const thumbs = () => new ThumbnailsRepo(db.$client);
  // `merges`: one index range per type, merged in row order (a sort of at most a page per type).
  const cases: Array<{ name: string; run: () => unknown; index: string; merges?: true }> = [
    ...(['name', 'size', 'modified', 'accessedAt'] as const).map((sort) => ({
      name: `a folder's page by ${sort}`,
      run: () => repo.page({ kind: 'folder', accountId: account, parentId: folderId }, { sort, order: 'desc', limit: 50, after: null }),
      index: `items_live_parent_${{ name: 'name', size: 'size', modified: 'modified', accessedAt: 'accessed' }[sort]}_idx`,
    })),
    { name: 'a name in a folder', run: () => repo.liveByName(account, folderId, 'file-10.bin'), index: 'items_live_name_idx' },
    {
      name: "a folder's names with a prefix",
      run: () => repo.liveNameKeysBetween(account, folderId, 'file-1', 'file-2'),
      index: 'items_live_name_idx',
    },
    {
      name: "a WebDAV folder's children by name",
      run: () => repo.liveChildEntriesByName(account, folderId, '', 100),
      index: 'items_live_name_idx',
    },
    {
      name: 'account-wide exact and prefix names',
      run: () => repo.searchCandidates(account, 'file-1', 20),
      index: 'items_live_name_key_idx',
    },
    {
      name: 'the starred list',
      run: () => repo.page({ kind: 'starred', accountId: account }, { sort: 'modified', order: 'desc', limit: 50, after: null }),
      index: 'items_starred_idx',
    },
    { name: "the account's file and folder counts", run: () => repo.liveCounts(account), index: 'items_account_type_idx' },
    { name: "the account's starred count", run: () => repo.liveCounts(account), index: 'items_starred_idx' },
    { name: 'the recent files', run: () => repo.recentFiles(account, 50), index: 'items_recent_idx' },
    {
      name: 'the photos range',
      run: () => thumbs().photosPage(account, THUMBNAIL_TYPES, { after: null, floor: 1000 }, 50),
      index: 'items_photos_idx',
    },
    {
      name: 'the trash list',
      run: () => repo.page({ kind: 'trash', accountId: account }, { sort: 'deletedAt', order: 'desc', limit: 50, after: null }),
      index: 'items_trash_idx',
    },
    { name: 'whether there is trash to empty', run: () => repo.hasTrash(account), index: 'items_trash_idx' },
    { name: 'what was trashed with a trash root', run: () => repo.trashSetPage(trashedFolderId, 100), index: 'items_deleted_root_idx' },
    { name: "a folder's subtree", run: () => repo.liveSubtreeIds(folderId), index: 'items_parent_id_idx' },
    { name: "a folder's depth (the walk up of the depth limit)", run: () => repo.depthOf(folderId), index: 'items_id_idx' },
    {
      name: "a folder's height (the walk down its live folders of the depth limit)",
      run: () => repo.heightOf(folderId, 250),
      index: 'items_live_parent_accessed_idx',
    },
    { name: 'whether an object key is referenced', run: () => repo.isKeyReferenced(storageKey), index: 'items_storage_key_idx' },
    {
      name: 'the thumbnail sweep',
      run: () => thumbs().sourcesPage([...THUMBNAIL_TYPES, ...VIDEO_TYPES], { afterSeq: 0, limit: 16 }),
      index: 'items_thumbnail_sources_idx',
      merges: true,
    },
    {
      name: 'the thumbnail sweep of one account',
      run: () => thumbs().sourcesPage([...THUMBNAIL_TYPES, ...VIDEO_TYPES], { afterSeq: 0, limit: 16, accountId: account, all: true }),
      index: 'items_account_type_idx',
    },
  ];

  test('a search of one or two characters sorts the row ids its name index finds, then reads only the rows it keeps', () => {
    // Sorting whole rows held a 150,000-item account's search for "f-" 1.3 s; the row ids alone, 0.1-0.2 s.
    const plans = itemsReadPlans(db.$client, () => repo.searchCandidates(account, 'e-', 20));
    const short = plans.find((p) => p.sql.includes('instr('))!;
    expect(short.plan).toEqual([
      'SEARCH items USING INTEGER PRIMARY KEY (rowid=?)',
      'LIST SUBQUERY 1',
      'SEARCH items USING INDEX items_live_name_key_idx (account_id=?)',
      'USE TEMP B-TREE FOR ORDER BY',
    ]);
  });

  for (const c of cases) {
    test(`${c.name}: ${c.index}, no scan of items${c.merges ? '' : ', no sort'}`, () => {
      const plans = itemsReadPlans(db.$client, c.run);
      expect(plans.length).toBeGreaterThan(0);
      for (const p of plans) {
        expect({ sql: p.sql, plan: p.plan, full: fullScan(p.plan) }).toMatchObject({ full: false });
        if (!c.merges)
          expect({ sql: p.sql, sorts: p.plan.filter((d) => d.includes('TEMP B-TREE FOR ORDER BY')) }).toMatchObject({ sorts: [] });
      }
      const uses = plans.some((p) => p.plan.some((d) => new RegExp(`^SEARCH (items|i) USING (COVERING )?INDEX ${c.index}\\b`).test(d)));
      expect({ plans, uses }).toMatchObject({ uses: true });
    });
  }
});
