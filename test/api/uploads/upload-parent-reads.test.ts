import { describe, expect, test } from 'bun:test';
import { folder, rowCount, storedObjectFiles } from '../../helpers/files.ts';
import * as seed from '../../helpers/seed.ts';
import { serverWithAdmin } from '../../helpers/suite.ts';
import type { TestServer } from '../../helpers/server.ts';
import { transactionAtRuns } from '../../helpers/statements.ts';

let t: TestServer;
serverWithAdmin((s) => ({ t } = s), { startWorker: false });

const LIVE_ROW = 'FROM items WHERE id = ? AND account_id = ? AND deleted_at IS NULL';

/** Whether a transaction was open at each read of `id`'s live row, while `fn` runs. */
const rowReads = (id: string, fn: () => Promise<void>) => transactionAtRuns(t, LIVE_ROW, fn, id);

function form(parts: Array<[string, string | File]>): FormData {
  const body = new FormData();
  for (const [name, value] of parts) body.append(name, value);
  return body;
}

describe("an upload's target folder (docs/performance.md, the tenth pass)", () => {
  test('named before the file part, is read once before the body and once in the commit', async () => {
    const o = await seed.owner(t);
    const box = await folder(o.client, 'Box');
    const send = (body: FormData) => o.client.request('/api/files/upload', { method: 'POST', body });
    expect(
      (
        await send(
          form([
            ['parentId', box.id],
            ['file', new File(['warm'], 'warm.bin')],
          ]),
        )
      ).status,
    ).toBe(200);

    const first = await rowReads(box.id, async () => {
      const res = await send(
        form([
          ['parentId', box.id],
          ['file', new File(['first'], 'first.bin')],
        ]),
      );
      expect(res.status).toBe(200);
      expect(((await res.json()) as { parentId: string }).parentId).toBe(box.id);
    });
    expect(first).toEqual([false, true]);

    // Named after the file part, the folder is found once the form is read, then in the commit.
    const after = await rowReads(box.id, async () => {
      const res = await send(
        form([
          ['file', new File(['after'], 'after.bin')],
          ['parentId', box.id],
        ]),
      );
      expect(res.status).toBe(200);
      expect(((await res.json()) as { parentId: string }).parentId).toBe(box.id);
    });
    expect(after).toEqual([false, true]);
  });

  test('trashed while the body is sent, refuses the upload at its commit: 404, nothing stored', async () => {
    const o = await seed.owner(t);
    const box = await folder(o.client, 'Gone');
    const objects = storedObjectFiles(t).objects.length;
    const boundary = 'x-boundary-parent';
    const encoder = new TextEncoder();
    let step = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(c) {
        step++;
        if (step === 1)
          c.enqueue(
            encoder.encode(
              `--${boundary}\r\nContent-Disposition: form-data; name="parentId"\r\n\r\n${box.id}\r\n` +
                `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="late.bin"\r\n\r\nfirst half `,
            ),
          );
        else if (step === 2) {
          // The folder goes to the trash after the checks before the body passed.
          await Bun.sleep(100);
          expect((await o.client.post('/api/files/delete', { ids: [box.id] })).status).toBe(200);
          c.enqueue(encoder.encode(`second half\r\n--${boundary}--\r\n`));
        } else c.close();
      },
    });
    const res = await o.client.request('/api/files/upload', {
      method: 'POST',
      body,
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(404);
    expect(((await res.json()) as { message: string }).message).toBe('Folder not found');
    expect(rowCount(t, "account_id = ? AND name = 'late.bin'", o.id)).toBe(0);
    expect(storedObjectFiles(t).objects.length).toBe(objects);
  });
});
