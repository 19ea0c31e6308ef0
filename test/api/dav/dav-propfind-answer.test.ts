import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { closeDatabase, openDatabase } from '../../../src/db/client.ts';
import { ItemsRepo } from '../../../src/db/repos/items.ts';
import { type DavClient, davLogin } from '../../helpers/dav.ts';
import * as seed from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

// The answers as PROPFIND built them before its per-item work was specialized; COFFER_WRITE_EXPECTED=1 writes them anew.
const EXPECTED = path.join(import.meta.dir, 'propfind-answers.expected.txt');
const FOLDER = 'c0ffee00-0000-4000-8000-000000000000';

let t: TestServer;
let dav: DavClient;
let ownerId: string;

/** Rows with fixed ids, keys and times: names that need escaping and encoding, folders, dates outside 1970–9999. */
function seedFolder(accountId: string): void {
  const db = openDatabase(path.join(t.dataDir, 'coffer.db'));
  const repo = new ItemsRepo(db.$client);
  const row = (i: number, over: { type?: 'file' | 'folder'; name: string; mimeType?: string | null; at?: number; parentId?: string }) => {
    const folder = over.type === 'folder';
    const at = over.at ?? Date.UTC(2024, 0, 1) + i * 86_401_001;
    repo.insert({
      id: i === 0 ? FOLDER : `c0ffee00-0000-4000-8000-${String(i).padStart(12, '0')}`,
      accountId,
      parentId: over.parentId === undefined ? FOLDER : over.parentId,
      type: over.type ?? 'file',
      name: over.name,
      size: folder ? 0 : i * 7919,
      mimeType: folder ? null : over.mimeType === undefined ? 'application/pdf' : over.mimeType,
      storageKey: folder ? null : `objects/${String(i).padStart(4, '0')}abcdef0123456789`,
      wrappedKey: null,
      keyId: null,
      starred: false,
      modifiedAt: at,
      accessedAt: at,
      createdAt: at - 5_000,
    });
  };
  try {
    db.$client.transaction(() => {
      row(0, { type: 'folder', name: 'Answer & <Co>', parentId: null as unknown as string });
      const names = ['plain.txt', 'a & b <c> "d" \'e\'.txt', "it's (1)!*.md", 'Ünïcødé 名前 🎉.jpg', 'sp ace%20.bin', 'sub folder'];
      names.forEach((name, n) => row(n + 1, { name, type: name === 'sub folder' ? 'folder' : 'file' }));
      row(7, { name: 'no type', mimeType: null });
      row(8, { name: 'odd type', mimeType: 'text/x-"weird"&<type>' });
      row(9, { name: 'before 1970', at: -86_400_000 * 400 - 123 });
      row(10, { name: 'after 9999', at: 253_402_300_800_000 + 86_400_000 * 40 + 7 });
      row(11, { name: 'epoch', at: 0 });
    })();
  } finally {
    closeDatabase(db);
  }
}

/** A folder 'Many ü' of files with these names. */
function seedMany(names: string[]): void {
  const db = openDatabase(path.join(t.dataDir, 'coffer.db'));
  const repo = new ItemsRepo(db.$client);
  const folder = 'c0ffee00-0000-4000-8000-100000000000';
  const at = Date.UTC(2024, 0, 1);
  const row = (id: string, parentId: string | null, type: 'file' | 'folder', name: string) =>
    repo.insert({
      id,
      accountId: ownerId,
      parentId,
      type,
      name,
      size: type === 'file' ? 1000 : 0,
      mimeType: type === 'file' ? 'text/plain' : null,
      storageKey: null,
      wrappedKey: null,
      keyId: null,
      starred: false,
      modifiedAt: at,
      accessedAt: at,
      createdAt: at,
    });
  try {
    db.$client.transaction(() => {
      row(folder, null, 'folder', 'Many ü');
      names.forEach((name, i) => row(`c0ffee00-0000-4000-8000-2${String(i).padStart(11, '0')}`, folder, 'file', name));
    })();
  } finally {
    closeDatabase(db);
  }
}

const REQUESTS: { name: string; path: string; depth: '0' | '1'; body?: string }[] = [
  { name: 'allprop, Depth 1, no body', path: 'Answer%20%26%20%3CCo%3E/', depth: '1' },
  { name: 'allprop, Depth 0', path: 'Answer%20%26%20%3CCo%3E/', depth: '0', body: '<D:propfind xmlns:D="DAV:"><D:allprop/></D:propfind>' },
  {
    name: 'allprop with include',
    path: 'Answer%20%26%20%3CCo%3E/',
    depth: '1',
    body: '<D:propfind xmlns:D="DAV:" xmlns:Z="urn:z"><D:allprop/><D:include><D:quota-used-bytes/><Z:Win32FileAttributes/></D:include></D:propfind>',
  },
  { name: 'propname', path: 'Answer%20%26%20%3CCo%3E/', depth: '1', body: '<D:propfind xmlns:D="DAV:"><D:propname/></D:propfind>' },
  {
    name: 'prop: live, dead and missing',
    path: 'Answer%20%26%20%3CCo%3E/',
    depth: '1',
    body: '<D:propfind xmlns:D="DAV:" xmlns:Z="urn:z"><D:prop><D:getetag/><D:getlastmodified/><D:creationdate/><Z:Win32FileAttributes/><D:getcontentlength/><Z:nothing/><D:getetag/><unqualified xmlns=""/></D:prop></D:propfind>',
  },
];

beforeAll(async () => {
  t = await startTestServer({ startWorker: false });
  await seed.admin(t);
  const owner = await seed.owner(t);
  dav = await davLogin(t, owner);
  ownerId = owner.id;
  seedFolder(owner.id);
  const patch = (p: string, props: string) =>
    dav.request('PROPPATCH', p, {
      headers: { 'content-type': 'application/xml' },
      body: `<D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:z"><D:set><D:prop>${props}</D:prop></D:set></D:propertyupdate>`,
    });
  expect((await patch('Answer%20%26%20%3CCo%3E/plain.txt', '<Z:Win32FileAttributes>00000020</Z:Win32FileAttributes>')).status).toBe(207);
  expect((await patch('Answer%20%26%20%3CCo%3E/sub%20folder/', '<Z:color>a &amp; <Z:b/></Z:color><plain xmlns="">x</plain>')).status).toBe(
    207,
  );
});
afterAll(() => t.stop());

describe('PROPFIND answers', () => {
  test('are byte-identical to the stored answers for the same folder', async () => {
    const answers: string[] = [];
    for (const r of REQUESTS) {
      const res = await dav.propfind(r.path, r.depth, r.body);
      expect(res.status).toBe(207);
      answers.push(`=== ${r.name}\n${await res.text()}\n`);
    }
    const actual = answers.join('');
    if (process.env.COFFER_WRITE_EXPECTED === '1') fs.writeFileSync(EXPECTED, actual);
    expect(actual).toBe(fs.readFileSync(EXPECTED, 'utf8'));
  });

  test('a listed child answers allprop as Depth 0 on it does, a locked one (its lockdiscovery) too', async () => {
    const folder = 'Answer%20%26%20%3CCo%3E/';
    const locked = `${folder}%C3%9Cn%C3%AFc%C3%B8d%C3%A9%20%E5%90%8D%E5%89%8D%20%F0%9F%8E%89.jpg`;
    const lock = await dav.request('LOCK', locked, {
      headers: { timeout: 'Second-600' },
      body: '<D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype><D:owner>me &amp; you</D:owner></D:lockinfo>',
    });
    expect(lock.status).toBe(200);
    // The seconds left of a lock's timeout may tick between the two answers.
    const elements = async (path: string, depth: '0' | '1') =>
      ((await (await dav.propfind(path, depth)).text()).match(/<D:response>.*?<\/D:response>/g) ?? []).map((e) =>
        e.replace(/Second-\d+/g, 'Second-n'),
      );
    const children = (await elements(folder, '1')).slice(1);
    expect(children.length).toBe(11);
    expect(children.filter((e) => e.includes('<D:activelock>')).length).toBe(1);
    for (const child of children) {
      const href = /<D:href>\/dav\/([^<]*)<\/D:href>/.exec(child)![1]!;
      expect(await elements(href, '0')).toEqual([child]);
    }
  });

  test('a listing of many streamed chunks arrives whole as UTF-8, every non-ASCII name intact', async () => {
    const names = Array.from({ length: 400 }, (_, i) => `Ünïcødé 名前 🎉 ${String(i).padStart(3, '0')} & <x>.txt`);
    seedMany(names);
    const res = await dav.propfind('Many%20%C3%BC/', '1');
    expect(res.status).toBe(207);
    const bytes = new Uint8Array(await res.arrayBuffer());
    // Several chunks of text, each encoded to UTF-8 by the runtime's response sink.
    expect(bytes.length).toBeGreaterThan(4 * 64 * 1024);
    const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    expect(text.split('<D:response>').length - 1).toBe(401);
    for (const name of names)
      expect(text).toContain(`<D:displayname>${name.replace('&', '&amp;').replace('<', '&lt;').replace('>', '&gt;')}</D:displayname>`);
    expect(text.endsWith('</D:multistatus>')).toBe(true);
  });
});
