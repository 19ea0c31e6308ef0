import { describe, expect, test } from 'bun:test';
import { json, ok } from '../../helpers/client.ts';
import type { DocserverDouble } from '../../helpers/docserver-double.ts';
import { documents } from '../../helpers/documents.ts';
import { davLogin, propfindRows } from '../../helpers/dav.ts';
import { EtagChecker, SyncViewer } from '../../helpers/etag-checker.ts';
import { eventually } from '../../helpers/eventually.ts';
import { folder, listAll, upload } from '../../helpers/files.ts';
import { newGroup } from '../../helpers/groups.ts';
import * as seed from '../../helpers/seed.ts';
import type { TestServer } from '../../helpers/server.ts';
import { serverWithDocserver } from '../../helpers/suite.ts';
import { createUpload, patchUpload } from '../../helpers/tus.ts';

let t: TestServer;
let admin: seed.SeededLogin;
let double: DocserverDouble;

serverWithDocserver((s) => ({ t, admin, double } = s));

async function idOf(login: seed.SeededLogin, path: string, root: string | null = null): Promise<string> {
  let parent = root;
  let found: { id: string } | undefined;
  for (const name of path.split('/')) {
    found = (await listAll(login.client, parent ? `/api/files?parentId=${parent}` : '/api/files')).find((i) => i.name === name);
    if (!found) throw new Error(`${path}: no ${name}`);
    parent = found.id;
  }
  return found!.id;
}

/** A queued job's answer, once the job ran. */
async function finished(login: seed.SeededLogin, res: Response): Promise<void> {
  const { jobId } = await json(res);
  await eventually(async () => (await login.client.get(`/api/files/jobs/${jobId}`)).status === 200);
}

describe('ETags, sizes and the change feed after every change, through every door, for every viewer', () => {
  test('each operation moves the ETag of exactly the folders whose content changed, in every view above it', async () => {
    const owner = await seed.owner(t);
    const sub = await seed.subUser(t, owner, [
      'files.download',
      'files.upload',
      'files.edit',
      'files.share',
      'files.delete',
      'files.trash',
    ]);
    const editor = await seed.owner(t);
    const watcher = await seed.owner(t);
    const teamEditor = await seed.owner(t);
    const teamViewer = await seed.owner(t);

    const a = await folder(owner.client, 'A');
    const b = await folder(owner.client, 'B', a.id);
    const other = await folder(owner.client, 'Other');
    const deep = await folder(owner.client, 'Deep', other.id);
    await upload(owner.client, 'f.txt', 'first', { parentId: b.id });
    await upload(owner.client, 'g.txt', 'gee', { parentId: a.id });
    await upload(owner.client, 'o.txt', 'other', { parentId: other.id });
    await upload(owner.client, 'd.txt', 'deep', { parentId: deep.id });
    const doc = await upload(owner.client, 'plan.docx', await documents.docx('plan'), { parentId: a.id });
    await ok('editor', owner.client.post(`/api/files/${a.id}/members`, { email: editor.email, role: 'editor' }));
    await ok('watcher', owner.client.post(`/api/files/${a.id}/members`, { email: watcher.email, role: 'viewer' }));
    const editors = await newGroup(admin, 'Team editors');
    await ok('lead', admin.client.post(`/api/admin/groups/${editors}/members`, { email: teamEditor.email, admin: true }));
    const viewers = await newGroup(admin, 'Team viewers', teamViewer);
    const team = await json(
      await ok(
        'team',
        admin.client.post('/api/admin/team-folders', {
          name: 'Team',
          quota: null,
          groups: [
            { groupId: editors, role: 'editor' },
            { groupId: viewers, role: 'viewer' },
          ],
        }),
      ),
    );
    await upload(teamEditor.client, 'x.txt', 'team', { parentId: team.folderId });

    const nc = async (name: string, login: seed.SeededLogin) =>
      new SyncViewer(name, await davLogin(t, login), `/remote.php/dav/files/${login.id}/`);
    const o = await nc('owner', owner);
    const ownerDav = new SyncViewer('owner on /dav/', o.dav, '/dav/');
    const ownerWebdav = new SyncViewer('owner on /remote.php/webdav/', o.dav, '/remote.php/webdav/');
    const s = await nc('sub-user', sub);
    const e = await nc('share editor', editor);
    const w = await nc('share viewer', watcher);
    const te = await nc('team editor', teamEditor);
    const tv = await nc('team viewer', teamViewer);
    const syncing = [o, ownerDav, ownerWebdav, s, e, w, te, tv];
    const own = new Set([o, ownerDav, ownerWebdav, s]);

    const fId = await idOf(owner, 'A/B/f.txt');
    const feeds = [
      { viewer: o, rel: '' },
      { viewer: e, rel: 'Shared%20with%20me/A/' },
      { viewer: te, rel: 'Team/' },
    ];
    const checker = new EtagChecker(syncing, { ownRoot: own, sameTree: [ownerDav, ownerWebdav, s], feeds });
    await checker.start();
    const step = (op: string, act: () => Promise<unknown>) => checker.step(op, act);

    // Content: new files, new bytes, through each door, by each kind of writer.
    await step('API upload (owner)', () => upload(owner.client, 'api.txt', 'api', { parentId: b.id }));
    await step('WebDAV PUT new (share editor)', () => ok('put', e.send('PUT', 'Shared%20with%20me/A/B/member.txt', {}, 'from a member')));
    await step('Nextcloud PUT content over a file (sub-user)', () => ok('put', s.send('PUT', 'A/B/f.txt', {}, 'second')));
    await step('/dav/ PUT content, same size (owner)', () => ok('put', ownerDav.send('PUT', 'A/B/f.txt', {}, 'third!')));
    await step('API replace content (share editor)', async () => {
      const form = new FormData();
      form.append('file', new File(['fourth'], 'f.txt'));
      await ok('replace', editor.client.request(`/api/files/${fId}/replace`, { method: 'POST', body: form }));
    });
    await step('tus upload new (owner)', async () => {
      const created = await ok('tus', createUpload(owner.client, 3, { filename: 'tus.txt', parentId: b.id }));
      await ok('patch', patchUpload(owner.client, created.headers.get('location')!, 0, new TextEncoder().encode('tus')));
    });
    await step('tus content over a file (share editor)', async () => {
      const created = await ok('tus', createUpload(editor.client, 5, { filename: 'f.txt', replaceId: fId }));
      await ok('patch', patchUpload(editor.client, created.headers.get('location')!, 0, new TextEncoder().encode('fifth')));
    });
    await step('Nextcloud chunked upload (share editor)', async () => {
      const uploads = `${t.url}/remote.php/dav/uploads/${editor.id}/chunked-1`;
      const auth = { authorization: e.dav.authorization };
      await ok(
        'mkcol',
        fetch(uploads, {
          method: 'MKCOL',
          headers: { ...auth, 'oc-total-length': '10', destination: e.url('Shared%20with%20me/A/big.bin') },
        }),
      );
      await ok('chunk', fetch(`${uploads}/1`, { method: 'PUT', headers: auth, body: 'chunk-' }));
      await ok('chunk', fetch(`${uploads}/2`, { method: 'PUT', headers: auth, body: 'two!' }));
      await ok(
        'move',
        fetch(`${uploads}/.file`, { method: 'MOVE', headers: { ...auth, destination: e.url('Shared%20with%20me/A/big.bin') } }),
      );
    });
    await step('document server save, content (share editor)', async () => {
      const res = await json(await ok('config', editor.client.get(`/api/docserver/config/${doc.id}`)));
      await double.open(res.config, res.token);
      double.edit(res.config.document.key, await documents.docx('plan, edited'));
      expect((await json(await double.callback(res.config.document.key, 6, { forcesavetype: 1 }))).error).toBe(0);
    });
    await step('version restored, content (owner)', async () => {
      const versions = (await json(await owner.client.get(`/api/files/${fId}/versions`))).versions;
      await ok('restore', owner.client.post(`/api/files/${fId}/versions/${versions[1].id}/restore`, {}));
    });

    await step('version restored through the Nextcloud versions door, content (sub-user)', async () => {
      const props =
        '<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop><oc:fileid/></d:prop></d:propfind>';
      const fileid = propfindRows(await (await s.send('PROPFIND', 'A/B/f.txt', { depth: '0' }, props)).text())[0]!.props.fileid;
      const versions = `${t.url}/remote.php/dav/versions/${sub.id}`;
      const auth = { authorization: s.dav.authorization };
      const list = await (await fetch(`${versions}/versions/${fileid}`, { method: 'PROPFIND', headers: { ...auth, depth: '1' } })).text();
      const entry = [...list.matchAll(/<D:href>([^<]*)<\/D:href>/g)].map((x) => x[1]!).at(-1)!;
      await ok('restore', fetch(`${t.url}${entry}`, { method: 'MOVE', headers: { ...auth, destination: `${versions}/restore/target` } }));
    });

    // Places: renames and moves keep a file's ETag and move its folders'.
    await step('API rename (owner)', async () =>
      ok('rename', owner.client.post('/api/files/rename', { id: await idOf(owner, 'A/g.txt'), name: 'gee.txt' })),
    );
    await step('WebDAV MOVE in (owner)', () => ok('move', o.send('MOVE', 'Other/o.txt', { destination: o.url('A/B/o.txt') })));
    await step('/remote.php/webdav/ MOVE out (owner)', () =>
      ok('move', ownerWebdav.send('MOVE', 'A/B/o.txt', { destination: ownerWebdav.url('Other/o.txt') })),
    );
    await step('API move of a folder in (owner)', () =>
      ok('move', owner.client.post('/api/files/move', { ids: [deep.id], parentId: b.id })),
    );
    await step('API move of a folder out (sub-user)', () =>
      ok('move', sub.client.post('/api/files/move', { ids: [deep.id], parentId: other.id })),
    );
    await step('WebDAV MOVE rename inside a share (share editor)', () =>
      ok('move', e.send('MOVE', 'Shared%20with%20me/A/B/member.txt', { destination: e.url('Shared%20with%20me/A/member2.txt') })),
    );
    await step('API copy in (owner)', async () =>
      finished(owner, await ok('copy', owner.client.post('/api/files/copy', { ids: [deep.id], parentId: a.id }))),
    );
    await step('WebDAV COPY inside a share (share editor)', () =>
      ok('copy', e.send('COPY', 'Shared%20with%20me/A/member2.txt', { destination: e.url('Shared%20with%20me/A/B/copy.txt') })),
    );
    await step('WebDAV COPY onto an existing file, content (owner)', () =>
      ok('copy', o.send('COPY', 'Other/o.txt', { destination: o.url('A/B/api.txt'), overwrite: 'T' })),
    );
    await step('WebDAV MOVE onto an existing file, content (owner)', () =>
      ok('move', o.send('MOVE', 'A/B/tus.txt', { destination: o.url('A/B/api.txt'), overwrite: 'T' })),
    );
    await step('WebDAV MKCOL inside a share (share editor)', () => ok('mkcol', e.send('MKCOL', 'Shared%20with%20me/A/New')));

    // Trash and back.
    const copyId = await idOf(owner, 'A/B/copy.txt');
    await step('WebDAV DELETE to the trash (share editor)', () => ok('delete', e.send('DELETE', 'Shared%20with%20me/A/B/copy.txt')));
    await step('API restore (owner)', () => ok('restore', owner.client.post('/api/files/trash/restore', { ids: [copyId] })));
    await step('API trash of a folder (owner)', async () =>
      ok('trash', owner.client.post('/api/files/delete', { ids: [await idOf(owner, 'A/Deep')] })),
    );
    await step('API delete for good from the trash (owner)', async () => {
      const trashed = (await json(await owner.client.get('/api/files/trash'))).map((i: { id: string }) => i.id);
      await ok('purge', owner.client.post('/api/files/trash/delete', { ids: trashed }));
    });
    await step('Nextcloud DELETE of a folder (sub-user)', () => ok('delete', s.send('DELETE', 'A/New')));
    await step('trashbin restore through the Nextcloud door (owner)', async () => {
      const list = await o.send('PROPFIND', '', { depth: '1' });
      expect(list.status).toBe(207);
      const res = await fetch(`${t.url}/remote.php/dav/trashbin/${owner.id}/trash`, {
        method: 'PROPFIND',
        headers: { authorization: o.dav.authorization, depth: '1' },
      });
      const entry = [...(await res.text()).matchAll(/<D:href>([^<]*)<\/D:href>/g)].map((m) => m[1]!).find((h) => h.includes('New'))!;
      await ok(
        'restore',
        fetch(`${t.url}${entry}`, {
          method: 'MOVE',
          headers: { authorization: o.dav.authorization, destination: `${t.url}/remote.php/dav/trashbin/${owner.id}/restore/New` },
        }),
      );
    });

    // Team folders.
    await step('team folder: WebDAV PUT (team editor)', () => ok('put', te.send('PUT', 'Team/y.txt', {}, 'why')));
    await step('team folder: API rename (team editor)', async () =>
      ok('rename', teamEditor.client.post('/api/files/rename', { id: await idOf(teamEditor, 'x.txt', team.folderId), name: 'x2.txt' })),
    );

    // Other doors: a bulk upload making folders, a share link's drop, a member's delete in a team folder.
    await step('API bulk upload with folders (share editor)', async () => {
      const body = new FormData();
      body.append('parentId', a.id);
      body.append('files', new File(['bulk one'], 'one.txt'));
      body.append('relativePaths', 'Made/Deeper/one.txt');
      await ok('bulk', editor.client.request('/api/files/upload/bulk', { method: 'POST', body }));
    });
    const linked = await ok('link', owner.client.post('/api/files/share', { ids: [b.id], shared: true, mode: 'view_upload' }));
    const token = /\/s\/([A-Za-z0-9_-]+)/.exec((await json(linked)).links[b.id])![1]!;
    await step('share link drop (anonymous)', async () => {
      const body = new FormData();
      body.append('file', new File(['dropped'], 'dropped.txt'));
      await ok('drop', fetch(`${t.url}/s/${token}/upload`, { method: 'POST', headers: { accept: 'application/json' }, body }));
    });
    const yId = await idOf(teamEditor, 'y.txt', team.folderId);
    await step('team folder: WebDAV DELETE (team editor)', () => ok('delete', te.send('DELETE', 'Team/y.txt')));
    await step("team folder: restore from the team's trash (team editor)", () =>
      ok('restore', teamEditor.client.post(`/api/team-folders/${team.id}/trash/restore`, { ids: [yId] })),
    );
    await step('team folder renamed by the admin', async () => {
      await ok('rename', admin.client.send('PATCH', `/api/admin/team-folders/${team.id}`, { name: 'Crew' }));
      feeds[2]!.rel = 'Crew/';
    });
    await step('another team folder for the same group (admin)', () =>
      ok(
        'team',
        admin.client.post('/api/admin/team-folders', { name: 'Second', quota: null, groups: [{ groupId: viewers, role: 'viewer' }] }),
      ),
    );
    await step('API empty trash (owner)', () => ok('empty', owner.client.post('/api/files/trash/empty', {})));

    // Nothing a sync client syncs: reading, starring, properties, locks.
    await step('read, star, PROPPATCH, LOCK and UNLOCK (owner)', async () => {
      await ok('get', o.send('GET', 'A/B/f.txt'));
      await ok('star', owner.client.post('/api/files/star', { ids: [fId], starred: true }));
      await ok(
        'proppatch',
        o.send(
          'PROPPATCH',
          'A/B/f.txt',
          {},
          '<?xml version="1.0"?><d:propertyupdate xmlns:d="DAV:" xmlns:z="urn:x"><d:set><d:prop><z:color>red</z:color></d:prop></d:set></d:propertyupdate>',
        ),
      );
      const lock = await ok(
        'lock',
        o.send(
          'LOCK',
          'A/B/f.txt',
          {},
          '<?xml version="1.0"?><d:lockinfo xmlns:d="DAV:"><d:lockscope><d:exclusive/></d:lockscope><d:locktype><d:write/></d:locktype></d:lockinfo>',
        ),
      );
      await ok('unlock', o.send('UNLOCK', 'A/B/f.txt', { 'lock-token': lock.headers.get('lock-token')! }));
    });

    // What is shared changes: the shared folder renamed by its owner, a member removed.
    await step('API rename of the shared folder itself (owner)', async () => {
      await ok('rename', owner.client.post('/api/files/rename', { id: a.id, name: 'A2' }));
      feeds[1]!.rel = 'Shared%20with%20me/A2/';
    });
    await step('team viewer taken out of its group (admin)', () =>
      ok('out', admin.client.delete(`/api/admin/groups/${viewers}/members/${teamViewer.id}`)),
    );
    await step('team viewer put back (admin)', () =>
      ok('in', admin.client.post(`/api/admin/groups/${viewers}/members`, { email: teamViewer.email })),
    );
    await step('sharing with people turned off (admin)', async () => t.server.ctx.services.settings.set('peopleSharing', false));
    await step('sharing with people turned on again (admin)', async () => t.server.ctx.services.settings.set('peopleSharing', true));
    await step('member removed (owner)', () => ok('remove', owner.client.delete(`/api/files/${a.id}/members/${watcher.id}`)));

    expect(checker.problems).toEqual([]);
    expect(checker.checked).toHaveLength(44);
  }, 120_000);
});
