import { Database } from 'bun:sqlite';
import { Elysia } from 'elysia';
import { SECURITY_HEADERS } from '../src/http/plugins/core.ts';

/**
 * The requests bench's floors for the profile route in the framework Coffer is built on, compiled as Coffer is
 * (bench/requests.ts builds it): the same SQLite read and JSON as bench/bare-read.ts, through Elysia configured as
 * Coffer's app is (its own router, not the runtime's). `bare` is Elysia and one route; `hooks` adds, written
 * minimally, what Coffer does on every request: the request id and the four security headers on the answer, the
 * peer's address counted in and out of a per-address count, the bearer token or `token` cookie looked up as a
 * session row (401 without one), and one access line per request written to stdout once per turn of the event loop.
 * `bare-elysia <db> <port> <account id> bare|hooks`; the route is `GET /profile`.
 */
const [dbPath, port, accountId, mode] = process.argv.slice(2);
if (!dbPath || !port || !accountId || (mode !== 'bare' && mode !== 'hooks')) {
  throw new Error('usage: bare-elysia <db> <port> <account id> bare|hooks');
}
const db = new Database(dbPath, { readonly: true });
db.run('PRAGMA busy_timeout = 5000');
const user = db.query('SELECT * FROM users WHERE id = ?');
const sessionOf = db.query<{ user_id: string }, [string]>('SELECT user_id FROM sessions WHERE id = ?');

if (mode === 'bare') {
  new Elysia({ systemRouter: false }).get('/profile', () => user.get(accountId)).listen({ port: Number(port), hostname: '127.0.0.1' });
} else {
  const inProgress = new Map<string, number>();
  let pending = '';
  const flush = () => {
    process.stdout.write(pending);
    pending = '';
  };
  type Meta = { id: string; ip: string; start: number; userId?: string };
  const metas = new WeakMap<Request, Meta>();
  let wrapped: ((request: Request) => Promise<Response>) | undefined;
  const release = (request: Request, status: number) => {
    const meta = metas.get(request);
    if (!meta) return;
    const n = (inProgress.get(meta.ip) ?? 1) - 1;
    if (n > 0) inProgress.set(meta.ip, n);
    else inProgress.delete(meta.ip);
    const line = {
      id: meta.id,
      method: request.method,
      path: '/profile',
      status,
      ms: performance.now() - meta.start,
      ip: meta.ip,
      login: meta.userId,
    };
    if (pending === '') setImmediate(flush);
    pending += `${JSON.stringify(line)}\n`;
  };
  const session = (request: Request): string | null => {
    const auth = request.headers.get('authorization');
    if (auth?.startsWith('Bearer ')) return auth.slice(7);
    const cookie = request.headers.get('cookie');
    const at = cookie ? cookie.indexOf('token=') : -1;
    return at < 0 ? null : cookie!.slice(at + 6).split(';')[0]!;
  };
  new Elysia({ systemRouter: false })
    .headers(SECURITY_HEADERS)
    .onRequest(({ request, server, set }) => {
      const id = crypto.randomUUID();
      const ip = server?.requestIP(request)?.address ?? 'unknown';
      metas.set(request, { id, ip, start: performance.now() });
      inProgress.set(ip, (inProgress.get(ip) ?? 0) + 1);
      set.headers['X-Request-Id'] = id;
    })
    .onBeforeHandle(({ request, status }) => {
      const token = session(request);
      const row = token ? sessionOf.get(token) : null;
      if (!row) return status(401, { message: 'Sign in first' });
      metas.get(request)!.userId = row.user_id;
    })
    // Elysia asks for the wrapper at every request: it is made once.
    .wrap(
      (fetch) =>
        (wrapped ??= async (request: Request) => {
          const response = await (fetch as unknown as (r: Request) => Promise<Response>)(request);
          release(request, response.status);
          return response;
        }),
    )
    .get('/profile', ({ request }) => user.get(metas.get(request)!.userId!))
    .listen({ port: Number(port), hostname: '127.0.0.1' });
}
