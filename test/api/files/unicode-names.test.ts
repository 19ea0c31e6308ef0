import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { parseXml } from '../../../src/lib/xml.ts';
import { json } from '../../helpers/client.ts';
import { davLogin, NextcloudApp } from '../../helpers/dav.ts';
import { listAll, upload, uploadRaw } from '../../helpers/files.ts';
import { admin, owner, type SeededLogin } from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { rawRequest } from '../../helpers/raw-http.ts';
import { createUpload } from '../../helpers/tus.ts';

let t: TestServer;
let o: SeededLogin;
beforeAll(async () => {
  t = await startTestServer();
  await admin(t);
  o = await owner(t);
});
afterAll(() => t.stop());

const EMOJI = '\u{1f600}';

describe('names with astral characters and combining marks', () => {
  test('a numbered name shortened to fit the 100-character limit never cuts an emoji in half', async () => {
    // 99 UTF-16 units: " (1)" leaves room for 96, which fell in the middle of the 48th emoji.
    const name = `a${EMOJI.repeat(49)}`;
    await upload(o.client, name, 'first');
    const second = await upload(o.client, name, 'second');
    expect(second.name.isWellFormed()).toBe(true);
    expect(second.name).toBe(`a${EMOJI.repeat(47)} (1)`);
    const listed = (await listAll(o.client, '/api/files?limit=500')).map((i) => i.name);
    expect(listed).toContain(second.name);
  });

  test('a numbered name keeps a letter and its combining accent together', async () => {
    // NFC cannot compose q + U+0301: cutting between them would leave a bare q in the new name.
    const name = `${'x'.repeat(91)}q\u0301.txt`;
    await upload(o.client, name, 'first');
    const second = await upload(o.client, name, 'second');
    expect(second.name).toBe(`${'x'.repeat(91)} (1).txt`);
  });
});

describe('names that are not Unicode text', () => {
  test('U+FFFE and U+FFFF are refused at every door: a WebDAV listing naming one was XML no client could read', async () => {
    const u = await owner(t);
    for (const name of ['a\uffff.txt', 'b\ufffe']) {
      const made = await u.client.post('/api/files/folder', { name });
      expect(made.status).toBe(422);
      expect((await json(made)).details[0]).toEqual({
        field: 'name',
        message: 'Name must not contain U+FFFE or U+FFFF, which are not characters',
      });
      expect((await uploadRaw(u.client, name, 'x')).status).toBe(400);
      expect((await createUpload(u.client, 1, { filename: name })).status).toBe(400);
    }
    const kept = await upload(u.client, 'kept.txt', 'x');
    const renamed = await u.client.post('/api/files/rename', { id: kept.id, name: 'kept\uffff.txt' });
    expect(renamed.status).toBe(422);
    const dav = await davLogin(t, u);
    const put = await dav.put(encodeURIComponent('c\uffff.txt'), 'x');
    expect(put.status).toBe(400);
    expect(await put.text()).toContain('U+FFFE or U+FFFF');
    const listing = await dav.propfind('', '1', '<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:allprop/></D:propfind>');
    expect(listing.status).toBe(207);
    const xml = await listing.text();
    expect(() => parseXml(xml)).not.toThrow();
    expect((await listAll(u.client, '/api/files')).map((i) => i.name)).toEqual(['kept.txt']);
  });

  test('half of a surrogate pair is refused rather than stored as U+FFFD under another name', async () => {
    const u = await owner(t);
    for (const name of ['c\ud800.txt', 'd\udc00x']) {
      const made = await u.client.post('/api/files/folder', { name });
      expect(made.status).toBe(422);
      expect((await json(made)).details[0].message).toContain('half of an emoji');
    }
    expect(await listAll(u.client, '/api/files')).toEqual([]);
  });
});

describe('WebDAV headers naming paths (Destination, If)', () => {
  test('a name sent in UTF-8 without percent-encoding is read as UTF-8, as the request path is (it was renamed to cafÃ©.txt)', async () => {
    const u = await owner(t);
    const dav = await davLogin(t, u);
    const nc = new NextcloudApp(dav, u.id);
    await upload(u.client, 'plain.txt', 'x');
    await upload(u.client, 'other.txt', 'y');
    const host = new URL(t.url).host;
    const send = (method: string, from: string, to: string) =>
      rawRequest(
        t.url,
        `${method} ${from} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: ${dav.authorization}\r\nDestination: http://${host}${to}\r\nContent-Length: 0\r\n\r\n`,
      );
    expect((await send('MOVE', '/dav/plain.txt', '/dav/caf\u00e9.txt')).status).toBe(201);
    // macOS spells it decomposed: the same NFC name as every other door.
    expect((await send('COPY', '/dav/caf%C3%A9.txt', '/dav/re\u0301sume\u0301.txt')).status).toBe(201);
    expect(
      (await send('MOVE', `/remote.php/dav/files/${u.id}/other.txt`, `/remote.php/dav/files/${u.id}/\u{1f389} party.txt`)).status,
    ).toBe(201);
    const names = (await listAll(u.client, '/api/files')).map((i) => i.name).sort();
    expect(names).toEqual(['caf\u00e9.txt', 'r\u00e9sum\u00e9.txt', '\u{1f389} party.txt'].sort());
    expect((await nc.files('GET', encodeURIComponent('\u{1f389} party.txt'))).status).toBe(200);
  });

  test("an If header's tag with a name in unencoded UTF-8 names that item: the lock it holds is submitted", async () => {
    const u = await owner(t);
    const dav = await davLogin(t, u);
    await upload(u.client, 'caf\u00e9.txt', 'before');
    const lock = await dav.request('LOCK', 'caf%C3%A9.txt', {
      headers: { 'content-type': 'application/xml', timeout: 'Second-600' },
      body: '<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockinfo>',
    });
    expect(lock.status).toBe(200);
    const token = lock.headers.get('lock-token')!;
    const host = new URL(t.url).host;
    const put = await rawRequest(
      t.url,
      `PUT /dav/caf%C3%A9.txt HTTP/1.1\r\nHost: ${host}\r\nAuthorization: ${dav.authorization}\r\nIf: <http://${host}/dav/caf\u00e9.txt> (${token})\r\nContent-Length: 5\r\n\r\nafter`,
    );
    expect(put.status).toBe(204);
    expect(await (await dav.request('GET', 'caf%C3%A9.txt')).text()).toBe('after');
  });
});

describe("a drop visitor's name", () => {
  test('keeps whole emoji at the 100-character cut and loses bidirectional controls, which turned the words around it', async () => {
    const u = await owner(t);
    const inbox = (await u.client.post('/api/files/folder', { name: 'Inbox' }).then(json)) as { id: string };
    const shared = await json(await u.client.post('/api/files/share', { ids: [inbox.id], shared: true, mode: 'upload' }));
    const token = new URL(shared.links[inbox.id]).pathname.split('/').at(-1)!;
    const names: Record<string, string> = {};
    for (const [file, uploader] of [
      ['one.txt', `A${EMOJI.repeat(50)}`],
      ['two.txt', '\u202eAda'],
    ]) {
      const form = new FormData();
      form.append('uploader', uploader!);
      form.append('file', new File(['x'], file!));
      const sent = await fetch(`${t.url}/s/${token}/upload`, { method: 'POST', body: form, headers: { accept: 'application/json' } });
      expect(sent.status).toBe(201);
    }
    for (const item of await listAll(u.client, `/api/files?parentId=${inbox.id}`)) {
      names[item.name] = (await json(await u.client.get(`/api/files/${item.id}/info`))).droppedBy.uploader;
    }
    expect(names).toEqual({ 'one.txt': `A${EMOJI.repeat(49)}`, 'two.txt': 'Ada' });
  });
});

describe('search', () => {
  test('finds a Greek name ending in Σ typed in either case: lower-casing wrote that Σ as σ before a dot and ς at the end of a query', async () => {
    const u = await owner(t);
    await upload(u.client, '\u03a6\u0391\u039a\u0395\u039b\u039f\u03a3.pdf', 'x');
    for (const q of [
      '\u03a6\u0391\u039a\u0395\u039b\u039f\u03a3',
      '\u03c6\u03b1\u03ba\u03b5\u03bb\u03bf\u03c2',
      '\u03c6\u03b1\u03ba\u03b5\u03bb\u03bf\u03c3',
    ]) {
      const found = await json(await u.client.get(`/api/files/search?q=${encodeURIComponent(q)}`));
      expect({ q, names: found.map((i: { name: string }) => i.name) }).toEqual({
        q,
        names: ['\u03a6\u0391\u039a\u0395\u039b\u039f\u03a3.pdf'],
      });
    }
  });
});
