import { json, type TestClient } from './client.ts';
import { eventually } from './eventually.ts';
import { upload } from './files.ts';

/**
 * Uploads a JPEG and waits until Photos (`listing`) lists it `width` wide: its size read and its thumbnail made,
 * so a view shows it.
 */
export async function uploadPhoto(
  client: TestClient,
  name: string,
  bytes: Uint8Array,
  width: number,
  opts: { parentId?: string | undefined; listing?: string } = {},
) {
  const file = await upload(client, name, bytes, { type: 'image/jpeg', ...(opts.parentId ? { parentId: opts.parentId } : {}) });
  await eventually(async () =>
    (await json(await client.get(opts.listing ?? '/api/files/photos'))).some(
      (p: { id: string; width: number | null }) => p.id === file.id && p.width === width,
    ),
  );
  return file;
}
