import { describe, expect, test } from 'bun:test';
import { ManualClock } from '../../../src/clock.ts';
import { json } from '../../helpers/client.ts';
import { type DavClient, davLogin, NextcloudApp } from '../../helpers/dav.ts';
import { deepestCallStack, folder, folderChain, upload } from '../../helpers/files.ts';
import * as seed from '../../helpers/seed.ts';
import type { TestServer } from '../../helpers/server.ts';
import { serverWithAdmin } from '../../helpers/suite.ts';

const DAY = 24 * 3600_000;
const clock = new ManualClock(Date.now());
let t: TestServer;
let admin: seed.SeededLogin;

serverWithAdmin((s) => ({ t, admin } = s), { clock, startWorker: false });

const PROPS = '<D:prop><D:getetag/><D:displayname/><D:resourcetype/></D:prop>';

function syncBody(token: string, level: '1' | 'infinite', limit?: number): string {
  return (
    '<?xml version="1.0" encoding="utf-8"?><D:sync-collection xmlns:D="DAV:">' +
    `<D:sync-token>${token}</D:sync-token><D:sync-level>${level}</D:sync-level>` +
    (limit ? `<D:limit><D:nresults>${limit}</D:nresults></D:limit>` : '') +
    `${PROPS}</D:sync-collection>`
  );
}

interface SyncAnswer {
  status: number;
  /** Members reported with their properties (200), by decoded href. */
  members: Map<string, string>;
  removed: string[];
  truncated: boolean;
  token: string;
  text: string;
}

function parse(status: number, text: string): SyncAnswer {
  const members = new Map<string, string>();
  const removed: string[] = [];
  let truncated = false;
  for (const m of text.matchAll(/<D:response><D:href>([^<]*)<\/D:href>([\s\S]*?)<\/D:response>/g)) {
    const href = decodeURIComponent(m[1]!);
    const rest = m[2]!;
    if (rest.startsWith('<D:status>HTTP/1.1 404')) removed.push(href);
    else if (rest.startsWith('<D:status>HTTP/1.1 507')) truncated = true;
    else {
      expect(rest).toContain('HTTP/1.1 200 OK');
      expect(members.has(href)).toBe(false);
      members.set(href, rest);
    }
  }
  const token = /<D:sync-token>([^<]*)<\/D:sync-token>/.exec(text)?.[1] ?? '';
  return { status, members, removed, truncated, token, text };
}

async function sync(dav: DavClient, path: string, token: string, level: '1' | 'infinite' = '1', limit?: number): Promise<SyncAnswer> {
  const res = await dav.request('REPORT', path, { headers: { 'content-type': 'application/xml' }, body: syncBody(token, level, limit) });
  return parse(res.status, await res.text());
}

/** Follows 507 continuations to the end: every member and removal reported, and the last token. */
async function syncAll(dav: DavClient, path: string, token: string, level: '1' | 'infinite', limit: number) {
  const members = new Set<string>();
  const removed: string[] = [];
  let rounds = 0;
  for (;;) {
    const a = await sync(dav, path, token, level, limit);
    expect(a.status).toBe(207);
    expect(a.members.size + a.removed.length).toBeLessThanOrEqual(limit);
    for (const h of a.members.keys()) members.add(h);
    removed.push(...a.removed);
    token = a.token;
    rounds++;
    if (!a.truncated) return { members, removed, token, rounds };
    expect(rounds).toBeLessThan(100);
  }
}

const sorted = (s: Iterable<string>) => [...s].sort();

async function davPut(dav: DavClient, path: string, body: string) {
  const res = await dav.put(path, body);
  expect([201, 204]).toContain(res.status);
}

describe('sync-collection (RFC 6578)', () => {
  test('the RFC 6578 §3.8 example: a first sync lists the members with their properties and a token; the next one only what changed', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    expect((await dav.request('MKCOL', 'home')).status).toBe(201);
    await davPut(dav, 'home/test.doc', 'a');
    await davPut(dav, 'home/vcard.vcf', 'b');
    expect((await dav.request('MKCOL', 'home/calendar')).status).toBe(201);

    const first = await sync(dav, 'home/', '');
    expect(first.status).toBe(207);
    expect(sorted(first.members.keys())).toEqual(['/dav/home/calendar/', '/dav/home/test.doc', '/dav/home/vcard.vcf']);
    expect(first.members.get('/dav/home/test.doc')).toMatch(
      /<D:getetag>&quot;[^<]+&quot;<\/D:getetag><D:displayname>test.doc<\/D:displayname>/,
    );
    expect(first.members.get('/dav/home/calendar/')).toContain('<D:resourcetype><D:collection/></D:resourcetype>');
    expect(first.removed).toEqual([]);
    expect(first.token).toMatch(/^urn:coffer:sync:/);

    // Nothing changed: nothing listed, a token that still works.
    const idle = await sync(dav, 'home/', first.token);
    expect([idle.members.size, idle.removed.length, idle.truncated]).toEqual([0, 0, false]);

    await davPut(dav, 'home/test.doc', 'a, changed');
    expect((await dav.request('DELETE', 'home/vcard.vcf')).status).toBe(204);
    await davPut(dav, 'home/mail.mbox', 'c');
    const next = await sync(dav, 'home/', idle.token);
    expect(sorted(next.members.keys())).toEqual(['/dav/home/mail.mbox', '/dav/home/test.doc']);
    expect(next.removed).toEqual(['/dav/home/vcard.vcf']);
    expect(next.members.get('/dav/home/test.doc')).not.toBe(first.members.get('/dav/home/test.doc'));

    // Deleted and put again under the same name: one response, the new member.
    expect((await dav.request('DELETE', 'home/mail.mbox')).status).toBe(204);
    await davPut(dav, 'home/mail.mbox', 'another');
    const again = await sync(dav, 'home/', next.token);
    expect([sorted(again.members.keys()), again.removed]).toEqual([['/dav/home/mail.mbox'], []]);
  });

  test('a PROPPATCH of DAV:lastmodified is a change: the next sync lists the file, the change log has one item.touched', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    expect((await dav.request('MKCOL', 'touch')).status).toBe(201);
    await davPut(dav, 'touch/a.txt', 'a');
    const first = await sync(dav, 'touch/', '');
    const seqBefore = t.server.ctx.services.changes.latestSeq();
    const res = await dav.request('PROPPATCH', 'touch/a.txt', {
      headers: { 'content-type': 'application/xml' },
      body: '<D:propertyupdate xmlns:D="DAV:"><D:set><D:prop><D:lastmodified>1686125350</D:lastmodified></D:prop></D:set></D:propertyupdate>',
    });
    expect(res.status).toBe(207);
    const next = await sync(dav, 'touch/', first.token);
    expect([...next.members.keys()]).toEqual(['/dav/touch/a.txt']);
    const page = t.server.ctx.services.changes.changesFor({ accountId: o.id }, { afterSeq: seqBefore, limit: 10 });
    expect(page.rows.map((r) => [r.kind, r.nameAfter, JSON.parse(r.details ?? '{}').modified])).toEqual([
      ['item.touched', 'a.txt', '2023-06-07T08:09:10.000Z'],
    ]);
  });

  test('DAV:sync-token is a live property of collections, named only; REPORT and the report are advertised', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    await folder(o.client, 'Docs');
    await upload(o.client, 'note.txt', 'n');
    const named = await dav.propfind(
      '',
      '1',
      '<D:propfind xmlns:D="DAV:"><D:prop><D:sync-token/><D:supported-report-set/></D:prop></D:propfind>',
    );
    const xml = await named.text();
    const root = /<D:response><D:href>\/dav\/<\/D:href>([\s\S]*?)<\/D:response>/.exec(xml)![1]!;
    const token = /<D:sync-token>([^<]+)<\/D:sync-token>/.exec(root)![1]!;
    expect(root).toContain(
      '<D:supported-report-set><D:supported-report><D:report><D:sync-collection/></D:report></D:supported-report></D:supported-report-set>',
    );
    const docs = /<D:response><D:href>\/dav\/Docs\/<\/D:href>([\s\S]*?)<\/D:response>/.exec(xml)![1]!;
    expect(docs).toContain('<D:sync-token>urn:coffer:sync:');
    // A file has neither: both answered 404.
    const file = /<D:response><D:href>\/dav\/note.txt<\/D:href>([\s\S]*?)<\/D:response>/.exec(xml)![1]!;
    expect(file).toMatch(/<D:propstat><D:prop><D:sync-token\/><D:supported-report-set\/><\/D:prop><D:status>HTTP\/1.1 404/);
    // allprop does not carry it (RFC 6578 §4).
    expect(await (await dav.propfind('', '0')).text()).not.toContain('sync-token');
    expect((await dav.request('OPTIONS', '')).headers.get('allow')).toContain('REPORT');

    // The property's token is one the report takes.
    await upload(o.client, 'after.txt', 'a');
    const answer = await sync(dav, '', token);
    expect(sorted(answer.members.keys())).toEqual(['/dav/after.txt']);
    // And the property can't be set.
    const patch = await dav.request('PROPPATCH', 'Docs', {
      body: '<D:propertyupdate xmlns:D="DAV:"><D:set><D:prop><D:sync-token>x</D:sync-token></D:prop></D:set></D:propertyupdate>',
    });
    expect(await patch.text()).toContain('HTTP/1.1 403');
  });

  test('a change of every kind, at Depth 1 and infinity', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    const box = await folder(o.client, 'Box');
    const sub = await folder(o.client, 'Sub', box.id);
    const outside = await upload(o.client, 'outside.txt', 'o');
    await upload(o.client, 'kept.txt', 'k', { parentId: box.id });
    const toRename = await upload(o.client, 'old-name.txt', 'r', { parentId: box.id });
    const toMoveOut = await upload(o.client, 'leaves.txt', 'l', { parentId: box.id });
    const toTrash = await upload(o.client, 'trashed.txt', 't', { parentId: box.id });
    const toRestore = await upload(o.client, 'restored.txt', 'r', { parentId: box.id });
    const toPurge = await upload(o.client, 'purged.txt', 'p', { parentId: box.id });
    await upload(o.client, 'deep.txt', 'd', { parentId: sub.id });
    await o.client.post('/api/files/delete', { ids: [toRestore.id] });

    const one = await sync(dav, 'Box/', '', '1');
    const all = await sync(dav, 'Box/', '', 'infinite');
    expect(sorted(one.members.keys())).toEqual([
      '/dav/Box/Sub/',
      '/dav/Box/kept.txt',
      '/dav/Box/leaves.txt',
      '/dav/Box/old-name.txt',
      '/dav/Box/purged.txt',
      '/dav/Box/trashed.txt',
    ]);
    expect(sorted(all.members.keys())).toEqual([...sorted(one.members.keys()), '/dav/Box/Sub/deep.txt'].sort());

    expect((await dav.request('MKCOL', 'Box/New')).status).toBe(201); // created
    await davPut(dav, 'Box/uploaded.txt', 'u'); // uploaded
    await davPut(dav, 'Box/kept.txt', 'k2'); // replaced
    expect((await o.client.post('/api/files/rename', { id: toRename.id, name: 'new-name.txt' })).status).toBe(200); // renamed
    expect((await o.client.post('/api/files/move', { ids: [toMoveOut.id], parentId: null })).status).toBe(200); // moved out
    expect((await o.client.post('/api/files/move', { ids: [outside.id], parentId: box.id })).status).toBe(200); // moved in
    expect((await o.client.post('/api/files/delete', { ids: [toTrash.id] })).status).toBe(200); // trashed
    expect((await o.client.post('/api/files/trash/restore', { ids: [toRestore.id] })).status).toBe(200); // restored
    await o.client.post('/api/files/delete', { ids: [toPurge.id] });
    expect((await o.client.post('/api/files/trash/delete', { ids: [toPurge.id] })).status).toBe(202); // purged
    await t.server.worker.drain();
    expect((await dav.request('COPY', 'Box/Sub/deep.txt', { headers: { destination: `${t.url}/dav/Box/Sub/deep-copy.txt` } })).status).toBe(
      201,
    ); // copied
    await davPut(dav, 'elsewhere.txt', 'not in Box'); // outside the collection

    const d1 = await sync(dav, 'Box/', one.token, '1');
    expect(d1.status).toBe(207);
    expect(sorted(d1.members.keys())).toEqual([
      '/dav/Box/New/',
      '/dav/Box/kept.txt',
      '/dav/Box/new-name.txt',
      '/dav/Box/outside.txt',
      '/dav/Box/restored.txt',
      '/dav/Box/uploaded.txt',
    ]);
    expect(sorted(d1.removed)).toEqual(['/dav/Box/leaves.txt', '/dav/Box/old-name.txt', '/dav/Box/purged.txt', '/dav/Box/trashed.txt']);

    const dInf = await sync(dav, 'Box/', all.token, 'infinite');
    expect(sorted(dInf.members.keys())).toEqual([...sorted(d1.members.keys()), '/dav/Box/Sub/deep-copy.txt'].sort());
    expect(sorted(dInf.removed)).toEqual(sorted(d1.removed));
    // The tokens continue: nothing more.
    const again = await sync(dav, 'Box/', dInf.token, 'infinite');
    expect([again.members.size, again.removed.length]).toEqual([0, 0]);
  });

  test('Depth infinity: a renamed folder is removed at its old href and listed with everything under it at the new one', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    for (const p of ['Tree', 'Tree/A', 'Tree/A/B']) expect((await dav.request('MKCOL', p)).status).toBe(201);
    await davPut(dav, 'Tree/A/one.txt', '1');
    await davPut(dav, 'Tree/A/B/two.txt', '2');
    const first = await sync(dav, 'Tree/', '', 'infinite');
    expect(sorted(first.members.keys())).toEqual(['/dav/Tree/A/', '/dav/Tree/A/B/', '/dav/Tree/A/B/two.txt', '/dav/Tree/A/one.txt']);
    expect((await dav.request('MOVE', 'Tree/A', { headers: { destination: `${t.url}/dav/Tree/Z` } })).status).toBe(201);
    const next = await sync(dav, 'Tree/', first.token, 'infinite');
    expect(next.removed).toEqual(['/dav/Tree/A/']);
    expect(sorted(next.members.keys())).toEqual(['/dav/Tree/Z/', '/dav/Tree/Z/B/', '/dav/Tree/Z/B/two.txt', '/dav/Tree/Z/one.txt']);
    // Depth 1 of the same collection: only the folder itself.
    const flat = await sync(dav, 'Tree/', '', '1');
    expect(sorted(flat.members.keys())).toEqual(['/dav/Tree/Z/']);
  });

  test('DAV:limit: at most nresults, 507 on the request-URI and a token that continues, first sync and changes alike', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    expect((await dav.request('MKCOL', 'Many')).status).toBe(201);
    expect((await dav.request('MKCOL', 'Many/In')).status).toBe(201);
    for (let i = 0; i < 7; i++) await davPut(dav, `Many/f${i}.txt`, String(i));
    for (let i = 0; i < 4; i++) await davPut(dav, `Many/In/g${i}.txt`, String(i));

    const page = await sync(dav, 'Many/', '', 'infinite', 3);
    expect(page.members.size).toBe(3);
    expect(page.truncated).toBe(true);
    expect(page.text).toContain(
      '<D:response><D:href>/dav/Many/</D:href><D:status>HTTP/1.1 507 Insufficient Storage</D:status></D:response>',
    );

    const first = await syncAll(dav, 'Many/', '', 'infinite', 3);
    expect(first.members.size).toBe(12);
    expect(first.rounds).toBe(4);

    for (let i = 0; i < 5; i++) await davPut(dav, `Many/In/g${i}.txt`, `changed ${i}`);
    expect((await dav.request('DELETE', 'Many/f0.txt')).status).toBe(204);
    const changes = await syncAll(dav, 'Many/', first.token, 'infinite', 2);
    expect(sorted(changes.members)).toEqual([
      '/dav/Many/In/g0.txt',
      '/dav/Many/In/g1.txt',
      '/dav/Many/In/g2.txt',
      '/dav/Many/In/g3.txt',
      '/dav/Many/In/g4.txt',
    ]);
    expect(changes.removed).toEqual(['/dav/Many/f0.txt']);
    expect(changes.rounds).toBeGreaterThanOrEqual(3);

    // A folder moved in whole under Depth infinity continues across pages too.
    expect((await dav.request('MKCOL', 'Bulk')).status).toBe(201);
    for (let i = 0; i < 6; i++) await davPut(dav, `Bulk/b${i}.txt`, String(i));
    expect((await dav.request('MOVE', 'Bulk', { headers: { destination: `${t.url}/dav/Many/Bulk` } })).status).toBe(201);
    const moved = await syncAll(dav, 'Many/', changes.token, 'infinite', 4);
    expect(sorted(moved.members)).toEqual(['/dav/Many/Bulk/', ...[0, 1, 2, 3, 4, 5].map((i) => `/dav/Many/Bulk/b${i}.txt`)].sort());
  });

  test('Depth infinity down a chain of 300 folders, whole and in pages: the same call stack at every level', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    const top = await folder(o.client, 'Chain');
    folderChain(t, o.id, top.id, 300);
    const hrefs = Array.from({ length: 300 }, (_, i) => `/dav/Chain/${'d/'.repeat(i + 1)}`);
    const deepest = await deepestCallStack(t.server.ctx.services.davSync, 'children', async () => {
      const whole = await sync(dav, 'Chain/', '', 'infinite');
      expect(whole.status).toBe(207);
      expect([...whole.members.keys()]).toEqual(hrefs);
      const paged = await syncAll(dav, 'Chain/', '', 'infinite', 70);
      expect([...paged.members]).toEqual(hrefs);
      expect(paged.rounds).toBe(5);
    });
    expect(deepest).toBeLessThan(100);
  });

  test('a garbled, foreign or expired token is 403 DAV:valid-sync-token; bad requests are 4xx', async () => {
    const o = await seed.owner(t);
    const other = await seed.owner(t);
    const dav = await davLogin(t, o);
    const otherDav = await davLogin(t, other);
    await folder(o.client, 'A');
    await folder(o.client, 'B');
    await folder(other.client, 'A');
    const a = await sync(dav, 'A/', '');
    const root = await sync(dav, '', '');
    const refused = async (client: DavClient, path: string, token: string) => {
      const res = await client.request('REPORT', path, { body: syncBody(token, '1') });
      expect(res.status).toBe(403);
      expect(await res.text()).toContain('<D:valid-sync-token/>');
    };
    await refused(dav, 'A/', 'garbage');
    await refused(dav, 'A/', `${a.token.slice(0, -2)}xx`);
    await refused(dav, 'A/', a.token.replace('urn:coffer:sync:', 'urn:coffer:sync:e'));
    await refused(dav, 'B/', a.token); // another collection
    await refused(dav, '', a.token);
    await refused(otherDav, 'A/', a.token); // another account, same path
    await refused(otherDav, '', root.token);
    // A forged seq with the signature of another is refused.
    const [payload, mac] = a.token.slice('urn:coffer:sync:'.length).split('.');
    const forged = Buffer.from(JSON.stringify({ s: 0 })).toString('base64url');
    expect(forged).not.toBe(payload);
    await refused(dav, 'A/', `urn:coffer:sync:${forged}.${mac}`);

    // Expired: rows after the token were thinned.
    await davPut(dav, 'x.txt', 'x');
    clock.advance(40 * DAY);
    await davPut(dav, 'y.txt', 'y');
    t.server.ctx.services.changes.thin();
    await refused(dav, '', root.token);
    const res = await dav.request('REPORT', '', { body: syncBody(root.token, '1') });
    expect(await res.text()).toContain('older than the changes the server keeps');

    // Other reports, Depth, files, bad limits.
    const other1 = await dav.request('REPORT', 'A/', { body: '<D:expand-property xmlns:D="DAV:"/>' });
    expect(other1.status).toBe(403);
    expect(await other1.text()).toContain('<D:supported-report/>');
    expect((await dav.request('REPORT', 'A/', { headers: { depth: '1' }, body: syncBody('', '1') })).status).toBe(400);
    expect((await dav.request('REPORT', 'A/', { body: syncBody('', '1').replace('<D:sync-level>1', '<D:sync-level>2') })).status).toBe(400);
    expect((await dav.request('REPORT', 'A/', { body: syncBody('', '1').replace(PROPS, '') })).status).toBe(400);
    expect((await dav.request('REPORT', 'A/', { body: '<nope' })).status).toBe(400);
    expect((await dav.request('REPORT', 'A/', {})).status).toBe(400);
    expect((await dav.request('REPORT', 'missing/', { body: syncBody('', '1') })).status).toBe(404);
    await davPut(dav, 'file.txt', 'f');
    const onFile = await dav.request('REPORT', 'file.txt', { body: syncBody('', '1') });
    expect(onFile.status).toBe(403);
    expect(await onFile.text()).toContain('<D:supported-report/>');
    const badLimit = await dav.request('REPORT', 'A/', {
      body: syncBody('', '1').replace('<D:prop>', '<D:limit><D:nresults>-1</D:nresults></D:limit><D:prop>'),
    });
    expect(badLimit.status).toBe(400);
  });

  test('visibility: another account never, a member only inside the share and nothing after removal, a sub-user its account', async () => {
    const o = await seed.owner(t);
    const member = await seed.owner(t);
    const stranger = await seed.owner(t);
    const shared = await folder(o.client, 'Team');
    await folder(o.client, 'Private');
    expect((await o.client.post(`/api/files/${shared.id}/members`, { email: member.email, role: 'editor' })).status).toBe(201);
    const memberDav = await davLogin(t, member);
    const strangerDav = await davLogin(t, stranger);
    const sub = await seed.subUser(t, { id: o.id }, []);
    const subDav = await davLogin(t, sub);

    const mount = 'Shared%20with%20me/Team/';
    const inShare = await sync(memberDav, mount, '', 'infinite');
    expect(inShare.status).toBe(207);
    const memberRoot = await sync(memberDav, '', '', 'infinite');
    const strangerRoot = await sync(strangerDav, '', '', 'infinite');
    const subRoot = await sync(subDav, '', '', 'infinite');
    expect(sorted(subRoot.members.keys())).toEqual(['/dav/Private/', '/dav/Team/']);

    await upload(o.client, 'inside.txt', 'i', { parentId: shared.id });
    await upload(o.client, 'secret.txt', 's');
    await davPut(memberDav, `${mount}by-member.txt`, 'm');

    const seen = await sync(memberDav, mount, inShare.token, 'infinite');
    expect(sorted(seen.members.keys())).toEqual(['/dav/Shared with me/Team/by-member.txt', '/dav/Shared with me/Team/inside.txt']);
    // The member's own tree syncs its own items only.
    const own = await sync(memberDav, '', memberRoot.token, 'infinite');
    expect([own.members.size, own.removed.length]).toEqual([0, 0]);
    const strangerSees = await sync(strangerDav, '', strangerRoot.token, 'infinite');
    expect([strangerSees.members.size, strangerSees.removed.length]).toEqual([0, 0]);
    const subSees = await sync(subDav, '', subRoot.token, 'infinite');
    expect(sorted(subSees.members.keys())).toEqual(['/dav/Team/by-member.txt', '/dav/Team/inside.txt', '/dav/secret.txt']);

    // Through the Nextcloud door: the same report, hrefs under it.
    const nc = new NextcloudApp(subDav, sub.id);
    const ncAnswer = parse(
      ...(await (async () => {
        const res = await nc.files('REPORT', 'Team/', {}, syncBody('', '1'));
        return [res.status, await res.text()] as const;
      })()),
    );
    expect(sorted(ncAnswer.members.keys())).toEqual([
      `/remote.php/dav/files/${sub.id}/Team/by-member.txt`,
      `/remote.php/dav/files/${sub.id}/Team/inside.txt`,
    ]);
    const ncToken = ncAnswer.token;

    // Removed: the share is gone from the member's tree, and the stale token opens nothing.
    expect((await o.client.send('DELETE', `/api/files/${shared.id}/members/${member.id}`)).status).toBe(200);
    await upload(o.client, 'after-removal.txt', 'a', { parentId: shared.id });
    expect((await memberDav.request('REPORT', mount, { body: syncBody(seen.token, 'infinite') })).status).toBe(404);
    const after = await sync(memberDav, '', own.token, 'infinite');
    expect(after.text).not.toContain('after-removal');
    // A member's token is bound to its account: the owner cannot use it on the same folder.
    const ownerDav = await davLogin(t, o);
    expect((await ownerDav.request('REPORT', 'Team/', { body: syncBody(seen.token, 'infinite') })).status).toBe(403);
    // The sub-user's Nextcloud token goes on working through /dav/ (same account, same collection).
    const subNext = await sync(subDav, 'Team/', ncToken, '1');
    expect(sorted(subNext.members.keys())).toEqual(['/dav/Team/after-removal.txt']);
  });

  test("a team folder syncs at the WebDAV root under its name: a group member sees the folder's changes, and nothing once out of the group", async () => {
    const member = await seed.owner(t);
    // Signed in again: the expired-token test moved the clock past the admin's session.
    const adminClient = await seed.login(t, admin.email, admin.password);
    const group = await json(await adminClient.post('/api/admin/groups', { name: `Crew ${Math.random().toString(36).slice(2)}` }));
    expect((await adminClient.post(`/api/admin/groups/${group.id}/members`, { email: member.email })).status).toBe(201);
    const made = await adminClient.post('/api/admin/team-folders', {
      name: 'Crew files',
      groups: [{ groupId: group.id, role: 'editor' }],
    });
    expect(made.status).toBe(201);
    const dav = await davLogin(t, member);
    const named = '<D:propfind xmlns:D="DAV:"><D:prop><D:sync-token/></D:prop></D:propfind>';
    // Listed at the root it has no token (another tree); asked on itself, one that its report takes.
    const atRoot = await (await dav.propfind('', '1', named)).text();
    expect(
      /<D:href>\/dav\/Crew%20files\/<\/D:href><D:propstat><D:prop><D:sync-token\/><\/D:prop><D:status>HTTP\/1.1 404/.test(atRoot),
    ).toBe(true);
    const own = /<D:sync-token>([^<]+)<\/D:sync-token>/.exec(await (await dav.propfind('Crew%20files/', '0', named)).text())![1]!;
    expect((await sync(dav, 'Crew%20files/', own, 'infinite')).status).toBe(207);
    const first = await sync(dav, 'Crew%20files/', '', 'infinite');
    expect(first.status).toBe(207);
    expect(first.members.size).toBe(0);
    await davPut(dav, 'Crew%20files/plan.txt', 'p');
    expect((await dav.request('MKCOL', 'Crew%20files/Sub')).status).toBe(201);
    const next = await sync(dav, 'Crew%20files/', first.token, 'infinite');
    expect(sorted(next.members.keys())).toEqual(['/dav/Crew files/Sub/', '/dav/Crew files/plan.txt']);
    // Out of the group: the folder is gone from its root.
    expect((await adminClient.send('DELETE', `/api/admin/groups/${group.id}/members/${member.id}`)).status).toBe(200);
    expect((await dav.request('REPORT', 'Crew%20files/', { body: syncBody(next.token, 'infinite') })).status).toBe(404);
  });
});
