// The profile `bun build --bytecode-order` lays the executable's bytecode out by: a run of a first build
// that starts a server and uses it as a client does, so the functions a server runs are stored together
// and an idle server reads less of its own executable (idle RSS 82.5 → 73 MiB; docs/performance.md).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const EMAIL = 'order@example.test';
const PASSWORD = 'bytecode order password';

async function expectOk(res: Response, what: string): Promise<Response> {
  if (!res.ok) throw new Error(`${what}: ${res.status} ${await res.text()}`);
  return res;
}

/** Signs up, signs in, uploads, lists, downloads and lists over WebDAV, as the clients of a server do. */
async function exercise(url: string): Promise<void> {
  const json = { 'content-type': 'application/json' };
  await expectOk(
    await fetch(`${url}/api/signup`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ email: EMAIL, password: PASSWORD, name: 'Order' }),
    }),
    'sign-up',
  );
  const login = await expectOk(
    await fetch(`${url}/api/login`, { method: 'POST', headers: json, body: JSON.stringify({ email: EMAIL, password: PASSWORD }) }),
    'sign-in',
  );
  const token = /token=([^;]+)/.exec(login.headers.get('set-cookie') ?? '')?.[1];
  if (!token) throw new Error('sign-in: no session cookie');
  const cookie = { Cookie: `token=${token}` };
  const form = new FormData();
  form.append('file', new File([new Uint8Array(4096)], 'order.bin'));
  const uploaded = await expectOk(await fetch(`${url}/api/files/upload`, { method: 'POST', headers: cookie, body: form }), 'upload');
  const { id } = (await uploaded.json()) as { id: string };
  await (await expectOk(await fetch(`${url}/api/files`, { headers: cookie }), 'list')).arrayBuffer();
  await (await expectOk(await fetch(`${url}/api/files/${id}/download`, { headers: cookie }), 'download')).arrayBuffer();
  const made = await expectOk(
    await fetch(`${url}/api/user/app-passwords`, {
      method: 'POST',
      headers: { ...cookie, ...json },
      body: JSON.stringify({ name: 'order' }),
    }),
    'app password',
  );
  const { password } = (await made.json()) as { password: string };
  const basic = { authorization: `Basic ${Buffer.from(`${EMAIL}:${password}`).toString('base64')}` };
  await expectOk(await fetch(`${url}/dav/order-dav.bin`, { method: 'PUT', headers: basic, body: new Uint8Array(4096) }), 'WebDAV PUT');
  await (await expectOk(await fetch(`${url}/dav/`, { method: 'PROPFIND', headers: { ...basic, depth: '1' } }), 'PROPFIND')).arrayBuffer();
}

/** Runs `exe serve` on an empty data directory, uses it, stops it, and leaves the profile it wrote in `orderFile`. */
export async function recordBytecodeOrder(exe: string, orderFile: string): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'coffer-bytecode-order-'));
  fs.rmSync(orderFile, { force: true });
  // A port nothing listens on now, from the kernel: builds may run at once, each recording.
  const probe = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } });
  const { port } = probe;
  probe.stop(true);
  const proc = Bun.spawn([exe, 'serve', '--port', String(port), '--host', '127.0.0.1', '--data-dir', dataDir], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LOG_LEVEL: 'warn', BUN_BYTECODE_ORDER_OUT: orderFile },
    stdout: 'ignore',
    stderr: 'inherit',
  });
  const url = `http://127.0.0.1:${port}`;
  try {
    for (let i = 0; ; i++) {
      try {
        if ((await fetch(`${url}/health`)).ok) break;
      } catch {
        if (proc.exitCode !== null || i > 1000)
          throw new Error(`the executable did not start to record its bytecode order (exit ${proc.exitCode})`);
        await Bun.sleep(20);
      }
    }
    await exercise(url);
  } finally {
    proc.kill('SIGTERM');
    await proc.exited;
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  if (!fs.existsSync(orderFile)) throw new Error(`the executable wrote no bytecode order to ${orderFile}`);
}
