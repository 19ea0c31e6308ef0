import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { davLogin } from '../../helpers/dav.ts';
import { listAll } from '../../helpers/files.ts';
import { memoryLogger } from '../../helpers/logs.ts';
import { NO_NEXTCLOUDCMD, nextcloudcmd, runClient, succeeded } from '../../helpers/nextcloudcmd.ts';
import { skipWithout } from '../../helpers/prerequisites.ts';
import * as seed from '../../helpers/seed.ts';
import { startTestServer, type TestServer, tempDir } from '../../helpers/server.ts';

// rclone from Debian: `apt-get install rclone`.
const RCLONE = Bun.which('rclone');
const NO_RCLONE = skipWithout(
  RCLONE ? null : 'the `rclone` command is not installed (apt-get install rclone)',
  'the rclone nextcloud vendor test',
);

const logger = memoryLogger();
let t: TestServer;
let dir: string;

beforeAll(async () => {
  if (NO_NEXTCLOUDCMD && NO_RCLONE) return;
  t = await startTestServer({ logger });
  await seed.admin(t);
  dir = tempDir('coffer-nc-clients-');
});
afterAll(async () => {
  if (NO_NEXTCLOUDCMD && NO_RCLONE) return;
  await t.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Runs rclone, which must succeed. */
const rclone = (args: string[]) => succeeded(runClient([RCLONE!, ...args], logger));

describe.skipIf(NO_NEXTCLOUDCMD)('the Nextcloud desktop client (nextcloudcmd) and chunked upload', () => {
  test('a 40 MiB file goes up in chunks, with its SHA1, and arrives byte-exact; nothing of the upload is left', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o, 'nextcloudcmd');
    const local = path.join(dir, 'big');
    fs.mkdirSync(path.join(local, 'Videos'), { recursive: true });
    const content = randomBytes(40 * 1024 * 1024);
    fs.writeFileSync(path.join(local, 'Videos', 'holiday film.mp4'), content);
    const { requests } = await succeeded(nextcloudcmd(t.url, logger, o.email, dav.password, local));
    const uploads = requests.filter((r) => r.includes(' /remote.php/dav/uploads/'));
    expect(uploads.filter((r) => r.startsWith('MKCOL '))).toHaveLength(1);
    // The client picks its chunk size (it grows while uploads are fast): more than one chunk, whatever it is.
    expect(uploads.filter((r) => r.startsWith('PUT ')).length).toBeGreaterThanOrEqual(2);
    expect(uploads.filter((r) => r.startsWith('MOVE ')).map((r) => r.split('/').at(-1))).toEqual(['.file']);
    expect(requests.filter((r) => r.startsWith('PUT /remote.php/dav/files/'))).toEqual([]);
    const res = await dav.request('GET', 'Videos/holiday%20film.mp4');
    expect(Buffer.from(await res.arrayBuffer()).equals(content)).toBe(true);
    // The client sent the file's SHA1 with the final MOVE (the capabilities ask for it); the server checked and kept it.
    const props = await dav.propfind(
      'Videos/holiday%20film.mp4',
      '0',
      '<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop><oc:checksums/></d:prop></d:propfind>',
    );
    expect(await props.text()).toContain(`SHA1:${createHash('sha1').update(content).digest('hex')}`);
    expect(t.server.ctx.db.$client.query<{ n: number }, []>('SELECT COUNT(*) AS n FROM chunked_uploads').get()!.n).toBe(0);
    // The next run finds nothing to do: the file's ETag and id came back with the MOVE.
    const again = await succeeded(nextcloudcmd(t.url, logger, o.email, dav.password, local));
    expect(again.requests.filter((r) => !r.startsWith('PROPFIND ') && r.includes(' /remote.php/'))).toEqual([]);
  });
});

describe.skipIf(NO_RCLONE)('rclone with the nextcloud vendor', () => {
  test('a 100 MiB file goes up with its modification time kept and its SHA1 matching oc:checksums', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o, 'rclone');
    const local = path.join(dir, 'rclone');
    fs.mkdirSync(local, { recursive: true });
    const file = path.join(local, 'archive.bin');
    const content = randomBytes(100 * 1024 * 1024);
    fs.writeFileSync(file, content);
    const mtime = new Date('2021-03-04T05:06:07Z');
    fs.utimesSync(file, mtime, mtime);
    const obscured = await rclone(['obscure', dav.password]);
    const remote = `:webdav,url='${t.url}/remote.php/dav/files/${o.id}/',vendor=nextcloud,user='${o.email}',pass='${obscured.stdout.trim()}':`;
    const flags = ['--config', '/dev/null', '--low-level-retries', '1', '--retries', '1'];
    await rclone([...flags, 'copy', local, `${remote}Backup`]);
    const [stored] = await listAll(o.client, `/api/files?parentId=${(await listAll(o.client, '/api/files'))[0].id}`);
    expect(stored.name).toBe('archive.bin');
    expect(stored.size).toBe(content.length);
    const listed = await rclone([...flags, 'lsjson', '--hash', `${remote}Backup`]);
    const [entry] = JSON.parse(listed.stdout);
    expect(new Date(entry.ModTime).getTime()).toBe(mtime.getTime());
    expect(entry.Hashes.sha1).toBe(createHash('sha1').update(content).digest('hex'));
    // rclone's own check compares sizes and SHA1s on both sides.
    await rclone([...flags, 'check', local, `${remote}Backup`]);
  });

  test('server-side copies and moves keep the SHA1 (oc:checksums): rclone check compares every hash after them', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o, 'rclone');
    const local = path.join(dir, 'rclone-copies');
    fs.mkdirSync(path.join(local, 'sub'), { recursive: true });
    const files = { 'a.bin': randomBytes(3000), 'b.bin': randomBytes(5000), 'sub/c.bin': randomBytes(700) };
    for (const [name, bytes] of Object.entries(files)) fs.writeFileSync(path.join(local, name), bytes);
    const obscured = await rclone(['obscure', dav.password]);
    const remote = `:webdav,url='${t.url}/remote.php/dav/files/${o.id}/',vendor=nextcloud,user='${o.email}',pass='${obscured.stdout.trim()}':`;
    const flags = ['--config', '/dev/null', '--low-level-retries', '1', '--retries', '1'];
    await rclone([...flags, 'copy', local, `${remote}Up`]);
    // rclone's own server-side copies: a COPY per file.
    await rclone([...flags, 'copy', `${remote}Up`, `${remote}Copied`]);
    // A folder's COPY, a COPY onto a file and a MOVE onto a file (other clients send them with Overwrite: T).
    const copy = (method: string, from: string, to: string) =>
      dav.request(method, from, { headers: { destination: `${t.url}/dav/${to}`, overwrite: 'T' } });
    expect((await copy('COPY', 'Up/', 'Tree/')).status).toBe(201);
    expect((await copy('COPY', 'Up/', 'Onto/')).status).toBe(201);
    expect((await copy('COPY', 'Up/b.bin', 'Onto/a.bin')).status).toBe(204);
    expect((await copy('MOVE', 'Onto/a.bin', 'Onto/sub/c.bin')).status).toBe(204);
    const sha1 = (b: Buffer) => createHash('sha1').update(b).digest('hex');
    const listed = async (folder: string) =>
      Object.fromEntries(
        JSON.parse((await rclone([...flags, 'lsjson', '-R', '--files-only', '--hash', `${remote}${folder}`])).stdout).map(
          (e: { Path: string; Hashes?: { sha1?: string } }) => [e.Path, e.Hashes?.sha1],
        ),
      );
    const expected = Object.fromEntries(Object.entries(files).map(([name, bytes]) => [name, sha1(bytes)]));
    expect(await listed('Copied')).toEqual(expected);
    expect(await listed('Tree')).toEqual(expected);
    expect(await listed('Onto')).toEqual({ 'b.bin': sha1(files['b.bin']), 'sub/c.bin': sha1(files['b.bin']) });
    const checked = await rclone([...flags, 'check', local, `${remote}Tree`]);
    expect(checked.output).not.toContain('could not be checked');
  });

  test("a PROPPATCH of DAV:lastmodified, as rclone's touch and its sync of a time-only change send it, sets the modified time", async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o, 'rclone');
    const local = path.join(dir, 'rclone-touch');
    fs.mkdirSync(local, { recursive: true });
    const file = path.join(local, 'notes.txt');
    fs.writeFileSync(file, 'same bytes');
    fs.utimesSync(file, new Date('2020-01-01T00:00:00Z'), new Date('2020-01-01T00:00:00Z'));
    const obscured = await rclone(['obscure', dav.password]);
    const remote = `:webdav,url='${t.url}/remote.php/dav/files/${o.id}/',vendor=nextcloud,user='${o.email}',pass='${obscured.stdout.trim()}':`;
    const flags = ['--config', '/dev/null', '--low-level-retries', '1', '--retries', '1'];
    await rclone([...flags, 'copy', local, `${remote}Notes`]);
    const touched = new Date('2023-06-07T08:09:10Z');
    fs.utimesSync(file, touched, touched);
    // The body rclone 1.65 and later send (this Debian rclone cannot set a time after an upload, so it is sent here).
    const res = await dav.request('PROPPATCH', 'Notes/notes.txt', {
      headers: { 'content-type': 'application/xml' },
      body: `<?xml version="1.0" encoding="utf-8" ?>
<D:propertyupdate xmlns:D="DAV:" xmlns:oc="http://owncloud.org/ns">
 <D:set>
  <D:prop>
   <lastmodified xmlns="DAV:">${touched.getTime() / 1000}</lastmodified>
   <oc:checksums>
	<oc:checksum>SHA1:${createHash('sha1').update('same bytes').digest('hex')}</oc:checksum>
   </oc:checksums>
  </D:prop>
 </D:set>
</D:propertyupdate>`,
    });
    expect(res.status).toBe(207);
    expect(await res.text()).toContain('HTTP/1.1 200 OK');
    const [entry] = JSON.parse((await rclone([...flags, 'lsjson', `${remote}Notes`])).stdout);
    expect(entry.ModTime).toBe('2023-06-07T08:09:10Z');
    const [row] = await listAll(o.client, `/api/files?parentId=${(await listAll(o.client, '/api/files'))[0].id}`);
    expect(row.modified).toBe(touched.toISOString());
    // The times agree now: nothing is sent again.
    const again = await rclone([...flags, 'sync', '-v', local, `${remote}Notes`]);
    expect(again.output).not.toContain('Copied');
    // Another SHA1 than the file's is not taken on the client's word: all of the PROPPATCH is refused.
    const claimed = await dav.request('PROPPATCH', 'Notes/notes.txt', {
      headers: { 'content-type': 'application/xml' },
      body: `<D:propertyupdate xmlns:D="DAV:" xmlns:oc="http://owncloud.org/ns"><D:set><D:prop>
<D:lastmodified>1000000000</D:lastmodified><oc:checksums><oc:checksum>SHA1:${'0'.repeat(40)}</oc:checksum></oc:checksums>
</D:prop></D:set></D:propertyupdate>`,
    });
    expect(await claimed.text()).toContain('HTTP/1.1 403 Forbidden');
    const [after] = JSON.parse((await rclone([...flags, 'lsjson', '--hash', `${remote}Notes`])).stdout);
    expect(after).toMatchObject({
      ModTime: '2023-06-07T08:09:10Z',
      Hashes: { sha1: createHash('sha1').update('same bytes').digest('hex') },
    });
  });

  test('rclone sync after a local rename by letter case only: refused (409), and the file stays on Coffer, not in the trash', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o, 'rclone');
    const local = path.join(dir, 'rclone-case');
    fs.mkdirSync(local, { recursive: true });
    fs.writeFileSync(path.join(local, 'a.txt'), 'kept');
    const obscured = await rclone(['obscure', dav.password]);
    const remote = `:webdav,url='${t.url}/remote.php/dav/files/${o.id}/',vendor=nextcloud,user='${o.email}',pass='${obscured.stdout.trim()}':`;
    const flags = ['--config', '/dev/null', '--low-level-retries', '1', '--retries', '1'];
    await rclone([...flags, 'sync', local, remote]);
    fs.renameSync(path.join(local, 'a.txt'), path.join(local, 'A.txt'));
    // The PUT of A.txt once replaced a.txt's content, and the delete of a.txt that followed took the one file to the trash.
    const run = await runClient([RCLONE!, ...flags, 'sync', local, remote], logger);
    expect(run.exitCode).not.toBe(0);
    expect(run.output).toContain('An item with this name already exists: 409 Conflict');
    expect((await listAll(o.client, '/api/files')).map((i) => i.name)).toEqual(['a.txt']);
    expect(await (await dav.request('GET', 'a.txt')).text()).toBe('kept');
    expect(await listAll(o.client, '/api/files/trash')).toEqual([]);
  });
});
