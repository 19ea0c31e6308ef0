import { describe, expect, test } from 'bun:test';
import { json } from '../../helpers/client.ts';
import { davLogin, propfindRows } from '../../helpers/dav.ts';
import type { DocserverDouble } from '../../helpers/docserver-double.ts';
import { documents } from '../../helpers/documents.ts';
import { EtagChecker, SyncViewer } from '../../helpers/etag-checker.ts';
import { folder, upload } from '../../helpers/files.ts';
import * as seed from '../../helpers/seed.ts';
import type { TestServer } from '../../helpers/server.ts';
import { serverWithDocserver } from '../../helpers/suite.ts';

let t: TestServer;
let double: DocserverDouble;

serverWithDocserver((s) => ({ t, double } = s));

describe('new content of a file while its folder is in the trash', () => {
  test('a document saved meanwhile: the trash shows the folder’s new size, and the restore brings right sizes and ETags that moved', async () => {
    const o = await seed.owner(t);
    const top = await folder(o.client, 'Top');
    const f = await folder(o.client, 'F', top.id);
    const g = await folder(o.client, 'G', f.id);
    const doc = await upload(o.client, 'plan.docx', await documents.docx('plan'), { parentId: g.id });
    await upload(o.client, 'note.txt', 'a note', { parentId: f.id });
    const viewer = new SyncViewer('owner', await davLogin(t, o), `/remote.php/dav/files/${o.id}/`);
    // A client that last synced before the trash and syncs again after the restore must find F and G changed.
    const checker = new EtagChecker([viewer], { ownRoot: new Set([viewer]), sameTree: [], feeds: [{ viewer, rel: 'Top/' }] });
    await checker.start();
    const opened = await json(await o.client.get(`/api/docserver/config/${doc.id}`));
    await double.open(opened.config, opened.token);

    await checker.step('trashed, a document saved inside, restored', async () => {
      expect((await o.client.post('/api/files/delete', { ids: [f.id] })).status).toBe(200);
      double.edit(opened.config.document.key, await documents.docx('plan, edited at far greater length while its folder was in the trash'));
      // Saved into the file where it lies, in the trash; the editor is told so (error 1) and stops auto-saving.
      expect((await json(await double.callback(opened.config.document.key, 6, { forcesavetype: 1 }))).error).toBe(1);
      // The Nextcloud clients' trash lists the folder with what is in it now.
      const trash = await fetch(`${t.url}/remote.php/dav/trashbin/${o.id}/trash`, {
        method: 'PROPFIND',
        headers: { authorization: viewer.dav.authorization, depth: '1' },
        body: '<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop><oc:size/></d:prop></d:propfind>',
      });
      const saved = (await json(await o.client.get(`/api/files/${doc.id}/info`))).size;
      expect(propfindRows(await trash.text())[1]!.props.size).toBe(String(saved + 'a note'.length));
      expect((await o.client.post('/api/files/trash/restore', { ids: [f.id] })).status).toBe(200);
    });
    expect(checker.problems).toEqual([]);
  });
});
