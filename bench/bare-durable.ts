import fs from 'node:fs';
import path from 'node:path';

/**
 * The peers bench's bare reference, compiled with `bun build --compile` as Coffer is: a Bun server doing only
 * a durable small upload's unavoidable work. PUT (raw body) or POST (multipart, field `file`) writes the file
 * to a temporary name, fsyncs it, renames it into one of 4,096 directories and fsyncs that directory, as the
 * local store does (no encryption, no database); POST /bulk stores every `files` part of a form. Its idle RSS is the runtime's own. Run as
 * `bare-durable serve --port <port> --host 127.0.0.1 --data-dir <dir>`, as `coffer serve` is started.
 */
const arg = (name: string) => process.argv[process.argv.indexOf(name) + 1]!;
const root = arg('--data-dir');
fs.mkdirSync(path.join(root, 'tmp'), { recursive: true });
let n = 0;

async function store(bytes: Uint8Array): Promise<void> {
  const id = n++;
  const temp = path.join(root, 'tmp', String(id));
  const handle = await fs.promises.open(temp, 'wx', 0o600);
  await handle.write(bytes);
  await handle.sync();
  await handle.close();
  const target = path.join(root, String(id % 4096));
  await fs.promises.mkdir(target, { recursive: true });
  await fs.promises.rename(temp, path.join(target, String(id)));
  const dir = await fs.promises.open(target, 'r');
  await dir.sync();
  await dir.close();
}

Bun.serve({
  port: Number(arg('--port')),
  hostname: arg('--host'),
  async fetch(req) {
    if (req.method === 'GET') return new Response('ok');
    if (req.method === 'POST' && new URL(req.url).pathname === '/bulk') {
      // Every `files` part of one request, up to 16 stored at once as Coffer's bulk upload does.
      const files = (await req.formData()).getAll('files') as File[];
      const inFlight = new Set<Promise<void>>();
      for (const file of files) {
        const stored: Promise<void> = file
          .arrayBuffer()
          .then((bytes) => store(new Uint8Array(bytes)))
          .finally(() => inFlight.delete(stored));
        inFlight.add(stored);
        if (inFlight.size >= 16) await Promise.race(inFlight);
      }
      await Promise.all(inFlight);
      return Response.json({ stored: files.length });
    }
    if (req.method === 'POST') {
      const file = (await req.formData()).get('file') as File;
      await store(new Uint8Array(await file.arrayBuffer()));
      return Response.json({ stored: 1 });
    }
    await store(new Uint8Array(await req.arrayBuffer()));
    return new Response(null, { status: 201 });
  },
});
