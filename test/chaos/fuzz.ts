import fs from 'node:fs';
import { createApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { openContext } from '../../src/composition.ts';
import { rawRequest } from '../helpers/raw-http.ts';
import { tempDir } from '../helpers/server.ts';
import { Rng } from './random.ts';

export interface Route {
  method: string;
  path: string;
}

/** Every route the app serves, read from the app itself (built on a throwaway data dir, never listening). */
export function appRoutes(): Route[] {
  const dir = tempDir('coffer-routes-');
  const ctx = openContext(loadConfig({ dataDir: dir }, { LOG_LEVEL: 'silent' }), { mode: 'server' });
  try {
    return createApp(ctx).routes.map((r) => ({ method: r.method, path: r.path }));
  } finally {
    ctx.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** What the fuzzer can use: the server, an admin session, a sub-user without permissions, real ids. */
export interface FuzzTarget {
  url: string;
  routes: Route[];
  admin: { email: string; password: string; cookie: string };
  /** A sub-user holding no permission at all. */
  subCookie: string;
  ids: { file: string; folder: string; shareToken: string; jobId: string; sessionId: string; subUserId: string };
}

export interface FuzzResult {
  requests: number;
  byStatus: Record<string, number>;
  /** Answers of 500 or more that the interface does not document, with the request that got each. */
  unexpected: Array<{ request: string; status: number; body: string }>;
  /** Raw requests the server closed or left unanswered (malformed beyond an answer); not failures. */
  noAnswer: number;
}

const JUNK = [
  '',
  ' ',
  'x',
  '..',
  '../../etc/passwd',
  '%2e%2e%2f',
  '%00',
  '\u0000',
  '\u202egnp.exe',
  '😀'.repeat(20),
  'a'.repeat(10_000),
  '<script>alert(1)</script>',
  "' OR 1=1 --",
  '-1',
  '0',
  '1e309',
  'NaN',
  'null',
  'undefined',
  '[]',
  '{}',
  '00000000-0000-0000-0000-000000000000',
  'not-a-uuid',
  '%',
  '%%%',
  'ï¿½',
  '\r\nX-Injected: 1',
];
const ODD_METHODS = ['PATCH', 'PUT', 'DELETE', 'OPTIONS', 'HEAD', 'TRACE', 'PROPFIND', 'MKCOL', 'FOO', 'get'];
const RANGES = [
  'bytes=0-0',
  'bytes=5-1',
  'bytes=-0',
  'bytes=-5',
  'bytes=0-',
  'bytes=abc',
  'bytes=0-1,2-3',
  'bytes=99999999999999999999-',
  'items=0-1',
  'bytes=-',
  'bytes=1-1',
];
const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-16',
  'text/plain',
  'multipart/form-data',
  'multipart/form-data; boundary=',
  'multipart/form-data; boundary=XX',
  'application/x-www-form-urlencoded',
  'application/vnd.api+json',
  'application/octet-stream',
  '',
  ';;;',
];
const QUERY_KEYS = ['limit', 'cursor', 'sortBy', 'order', 'parentId', 'q', 'query', 'inline', 'refreshIp', 'graceMinutes', 'jobId'];
const BAD_CURSORS = ['!!!', 'eyJ9', 'eyJzIjoxfQ', 'AAAA', 'a'.repeat(5000), btoa('{"k":[1,2,3],"id":null}')];

function jsonBodies(rng: Rng, ids: FuzzTarget['ids']): string[] {
  const anyId = rng.pick([ids.file, ids.folder, rng.pick(JUNK)]);
  const deep = '['.repeat(rng.int(100, 5000)) + ']'.repeat(rng.int(0, 5000));
  return [
    '{',
    '{"ids":',
    'null',
    '[]',
    '"text"',
    '12345678901234567890',
    deep,
    `{"ids":"${anyId}"}`,
    `{"ids":[1,2,3]}`,
    `{"ids":[${Array.from({ length: 600 }, () => `"${anyId}"`).join(',')}]}`,
    `{"ids":["${anyId}"],"parentId":${JSON.stringify(rng.pick([ids.folder, ids.file, anyId, 5, true]))}}`,
    `{"ids":["${ids.folder}"],"parentId":"${ids.folder}"}`,
    `{"name":${JSON.stringify(rng.pick(JUNK))},"parentId":${JSON.stringify(rng.pick([null, ids.folder, ids.file, '']))}}`,
    `{"id":"${anyId}","name":${JSON.stringify(rng.pick(JUNK))}}`,
    `{"email":${JSON.stringify(rng.pick(JUNK))},"password":${JSON.stringify(rng.pick(JUNK))}}`,
    `{"code":${JSON.stringify(rng.pick(['000000', 'ABCD-EFGH', 123456, null, 'x'.repeat(100)]))}}`,
    `{"fileSize":${rng.pick(['-1', '1e300', '"big"', '9007199254740993', 'null'])}}`,
    `{"starred":"yes","ids":["${anyId}"]}`,
    `{"shared":true,"ids":["${anyId}"],"expiry":${JSON.stringify(rng.pick(['7d', '1y', '', 'never', 5]))}}`,
    `{"enabled":${JSON.stringify(rng.pick([false, 'true', 1, null]))}}`,
    `{"maxBytes":${rng.pick(['0', '-5', '1e20', '"10G"', '1048576'])}}`,
    `{"knownProxies":${JSON.stringify(rng.pick([['x'.repeat(300)], Array.from({ length: 101 }, () => '10.0.0.1'), 'all', [null]]))}}`,
    `{"url":${JSON.stringify(rng.pick(['javascript:alert(1)', 'http://', 'ftp://x', '', null, 'http://[::1']))}}`,
    `{"storageLimit":${rng.pick(['-1', '"5G"', '1e400', 'null'])},"targetUserId":"${anyId}"}`,
    `{"permissions":${JSON.stringify(rng.pick([['files.nuke'], 'all', [1], null]))},"email":"a@b.c","password":"${'p'.repeat(rng.int(0, 200))}","name":"n"}`,
    `{"storageKeys":["../x"],"fileIds":["${anyId}"],"graceMinutes":${rng.pick(['0', '-1', '"x"', '99999999'])}}`,
    `{"status":${rng.pick(['2', '"x"', '6', 'null'])},"key":"${rng.pick(JUNK).slice(0, 100)}","url":"http://127.0.0.1:1/x"}`,
    `{"a":"${'\u0000\u0001\u001f'.repeat(50)}"}`,
    `{"__proto__":{"isAdmin":true},"constructor":{"prototype":{"x":1}}}`,
    `{"name":"${'n'.repeat(1024 * 1024)}"}`,
  ];
}

function multipartBody(rng: Rng, ids: FuzzTarget['ids']): { type: string; body: Uint8Array } {
  const boundary = rng.pick(['b', 'XyZ', '-'.repeat(70), 'a b', 'bound"ary']);
  const parts: string[] = [];
  const n = rng.int(0, 6);
  for (let i = 0; i < n; i++) {
    const kind = rng.int(0, 5);
    if (kind === 0)
      parts.push(
        `--${boundary}\r\nContent-Disposition: form-data; name="parentId"\r\n\r\n${rng.pick([ids.folder, ids.file, rng.pick(JUNK)])}\r\n`,
      );
    else if (kind === 1)
      parts.push(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${rng.pick(JUNK).slice(0, 300)}"\r\nContent-Type: ${rng.pick(['image/png', 'text/html', '', 'x/y/z'])}\r\n\r\n${rng.pick(['', 'hello', '\u0089PNG\r\n', 'x'.repeat(rng.int(0, 70_000))])}\r\n`,
      );
    else if (kind === 2)
      parts.push(
        `--${boundary}\r\nContent-Disposition: form-data; name="files"; filename*=UTF-8''%E2%80%AE${encodeURIComponent(rng.pick(JUNK).slice(0, 50))}\r\n\r\ndata\r\n`,
      );
    else if (kind === 3)
      parts.push(
        `--${boundary}\r\nContent-Disposition: ${rng.pick(['attachment', 'form-data', 'form-data; name=', ';;'])}\r\n${'X-H: v\r\n'.repeat(rng.int(0, 3000))}\r\nbody\r\n`,
      );
    else if (kind === 4) parts.push(`--${boundary}\r\nNo-Colon-Header\r\n\r\n`);
    else
      parts.push(
        `--${boundary}\r\nContent-Disposition: form-data; name="relativePaths"\r\n\r\n${rng.pick(['../../x', 'a/b/c.txt', '/', '\u202edir/x', 'd'.repeat(5000)])}\r\n`,
      );
  }
  if (rng.chance(0.7)) parts.push(`--${boundary}--${rng.chance(0.5) ? '\r\n' : ''}`);
  const body = Buffer.from(parts.join(''));
  const cut = rng.chance(0.2) ? body.subarray(0, rng.int(0, body.length)) : body;
  return { type: rng.chance(0.85) ? `multipart/form-data; boundary=${boundary}` : rng.pick(CONTENT_TYPES), body: cut };
}

function pathFor(rng: Rng, route: Route, ids: FuzzTarget['ids']): string {
  return route.path.replace(/:(\w+)/g, (_m, name: string) => {
    if (rng.chance(0.4)) return encodeURIComponent(rng.pick(JUNK)).slice(0, 12_000);
    const real: Record<string, string> = {
      id: rng.pick([ids.file, ids.folder, ids.subUserId]),
      jobId: ids.jobId,
      token: ids.shareToken,
      sessionId: ids.sessionId,
    };
    return real[name] ?? rng.pick(JUNK);
  });
}

function queryFor(rng: Rng, ids: FuzzTarget['ids']): string {
  if (rng.chance(0.5)) return '';
  const pairs: string[] = [];
  for (let i = rng.int(1, 4); i > 0; i--) {
    const key = rng.pick(QUERY_KEYS);
    const value =
      key === 'cursor' ? rng.pick(BAD_CURSORS) : rng.pick([...JUNK, ids.folder, '500', '501', '-3', 'asc', 'size', 'true', '1']);
    pairs.push(`${rng.chance(0.1) ? encodeURIComponent(rng.pick(JUNK)) : key}=${encodeURIComponent(value).slice(0, 12_000)}`);
  }
  return `?${pairs.join('&')}`;
}

/** Requests that end the session they carry: the fuzz's admin never sends them, or it would lock itself out. */
const endsSession = (method: string, path: string) =>
  /^\/api\/(logout|logout-all|change-password)(\?|$)/.test(path) || (method === 'DELETE' && path.startsWith('/api/sessions/'));

/** A malformed request as raw bytes: request lines, Host headers and framing fetch() would never send. */
function rawCase(rng: Rng, target: FuzzTarget): { head: string; body?: Uint8Array; label: string; badRequestLine: boolean } {
  const route = rng.pick(target.routes);
  const pathPart = rng.chance(0.5)
    ? pathFor(rng, route, target.ids)
    : rng.pick([
        '*',
        '/%00',
        '//',
        '/../../etc/passwd',
        'http://evil/health',
        '/api/files?limit=' + 'x'.repeat(9000),
        '/s/%ff%fe',
        'health',
        '/\u00e9',
      ]);
  const method = rng.chance(0.7) ? route.method : rng.pick([...ODD_METHODS, 'CONNECT', 'GET /x']);
  const version = rng.pick(['1.1', '1.1', '1.1', '1.0', '0.9', '2.0', 'x']);
  const host = rng.pick([
    new URL(target.url).host,
    new URL(target.url).host,
    'a b',
    '%',
    '',
    '[::1',
    'x:99999',
    'x/y',
    'ü.example',
    'h'.repeat(5000),
    null,
  ]);
  const lines = [`${method} ${pathPart} HTTP/${version}`];
  if (host !== null) lines.push(`Host: ${host}`);
  if (rng.chance(0.6))
    lines.push(
      `Cookie: ${endsSession(method, pathPart) ? 'token=garbage' : rng.pick([target.admin.cookie, target.subCookie, 'token=garbage'])}`,
    );
  const extra = rng.int(0, 4);
  for (let i = 0; i < extra; i++) {
    lines.push(
      rng.pick([
        'Content-Length: 5',
        'Content-Length: 5\r\nContent-Length: 7',
        'Content-Length: -1',
        'Transfer-Encoding: chunked',
        'Transfer-Encoding: chunked\r\nContent-Length: 3',
        'Transfer-Encoding: gzip, chunked',
        'X-Folded: a\r\n b',
        'NoColonHere',
        `X-Big: ${'v'.repeat(rng.int(1000, 20_000))}`,
        `Range: ${rng.pick(RANGES)}`,
        'Expect: 100-continue',
        `Content-Type: ${rng.pick(CONTENT_TYPES)}`,
        'Origin: http://evil.example',
        'X-Forwarded-For: 1.2.3.4, not-an-ip',
      ]),
    );
  }
  lines.push('Connection: close');
  const body = rng.chance(0.5)
    ? Buffer.from(rng.pick(['hello', '5\r\nhello\r\n0\r\n\r\n', 'zz\r\nnope\r\n', '{"ids":', '\u0000'.repeat(10)]))
    : undefined;
  return {
    head: `${lines.join('\r\n')}\r\n\r\n`,
    body,
    label: `${method} ${pathPart.slice(0, 120)} HTTP/${version} (raw, Host ${String(host).slice(0, 30)})`,
    // A space, line break or other control character (a raw NUL from JUNK) in the method or the target ends
    // the request line before its version, and the runtime answers 505 itself.
    badRequestLine: (version !== '1.1' && version !== '1.0') || /[\s\x00-\x1f\x7f]/.test(method) || /[\s\x00-\x1f\x7f]/.test(pathPart),
  };
}

/** Whether an answer of 500 or more is one the interface documents (docs/compatibility.md › Operations, Jobs): the update feed's 502, a failed job's 500. */
function documented(path: string, status: number, body: string): boolean {
  if (status === 502 && path.startsWith('/api/version/latest')) return true;
  if (status === 500 && path.startsWith('/api/files/jobs/') && body.includes('Background file operation failed')) return true;
  return false;
}

/**
 * A seeded fuzzer over every route: malformed JSON, wrong types, huge strings, control characters,
 * bad cursors, bad Range, broken multipart, odd Host headers and request lines, odd methods, with an
 * admin session, a sub-user without permissions, a forged token or none. Any answer of 500 or more
 * that the interface does not document is reported with the request that got it.
 */
export async function runFuzz(
  target: FuzzTarget,
  opts: { requests: number; seed: number; concurrency?: number; every?: { n: number; run: () => Promise<void> } },
): Promise<FuzzResult> {
  const rng = new Rng(opts.seed);
  const result: FuzzResult = { requests: 0, byStatus: {}, unexpected: [], noAnswer: 0 };
  const count = (status: number) => (result.byStatus[status] = (result.byStatus[status] ?? 0) + 1);
  let next = 0;

  const one = async (): Promise<void> => {
    if (rng.chance(0.12)) {
      const c = rawCase(rng, target);
      try {
        const res = await rawRequest(target.url, c.head, { body: c.body, timeoutMs: 3000 });
        count(res.status);
        const body = res.body.toString('utf8', 0, 300);
        // 505 is the runtime's answer to a request line that does not end in HTTP/1.0 or HTTP/1.1.
        const versionRefused = res.status === 505 && c.badRequestLine;
        if (res.status >= 500 && !versionRefused && !documented(c.head.split(' ')[1] ?? '', res.status, body))
          result.unexpected.push({ request: c.label, status: res.status, body });
      } catch {
        result.noAnswer++;
      }
      return;
    }
    const route = rng.pick(target.routes);
    const method = rng.chance(0.85) ? route.method : rng.pick(ODD_METHODS);
    const path = pathFor(rng, route, target.ids) + queryFor(rng, target.ids);
    const headers: Record<string, string> = {};
    const who = endsSession(method, path) ? 0.9 + rng.next() / 10 : rng.next();
    if (who < 0.7) headers.cookie = target.admin.cookie;
    else if (who < 0.8) headers.cookie = target.subCookie;
    else if (who < 0.9)
      headers.authorization = rng.pick([
        'Bearer x.y.z',
        'Bearer ',
        'Basic YTpi',
        `Bearer ${'a'.repeat(5000)}`,
        'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.',
      ]);
    if (rng.chance(0.2)) headers.range = rng.pick(RANGES);
    if (rng.chance(0.1)) headers.origin = rng.pick(['http://evil.example', 'null', target.url]);
    if (rng.chance(0.1)) headers.accept = rng.pick(['application/x-ndjson', 'text/html', 'application/json', '*/*;q=x']);
    if (rng.chance(0.05)) headers['x-forwarded-for'] = rng.pick(JUNK).slice(0, 200);
    if (rng.chance(0.05)) headers['x-request-id'] = rng.pick(JUNK).slice(0, 200);
    if (rng.chance(0.05)) headers['x-desktop-client'] = '1';
    let body: Uint8Array | string | undefined;
    if (method !== 'GET' && method !== 'HEAD' && method !== 'get') {
      const kind = rng.next();
      if (kind < 0.6) {
        body = rng.pick(jsonBodies(rng, target.ids));
        headers['content-type'] = rng.chance(0.85) ? 'application/json' : rng.pick(CONTENT_TYPES);
      } else if (kind < 0.85) {
        const m = multipartBody(rng, target.ids);
        body = m.body;
        headers['content-type'] = m.type;
      } else if (kind < 0.95) {
        body = rng.pick(['', 'garbage', '\u0000\u0001', 'x'.repeat(rng.int(0, 2 * 1024 * 1024))]);
        if (rng.chance(0.5)) headers['content-type'] = rng.pick(CONTENT_TYPES);
      }
    }
    const label = `${method} ${path.slice(0, 160)} ${headers.cookie === target.admin.cookie ? '(admin)' : headers.cookie ? '(sub-user)' : '(no session)'}`;
    try {
      const res = await fetch(target.url + path, { method, headers, body, redirect: 'manual', signal: AbortSignal.timeout(15_000) });
      count(res.status);
      let text = '';
      if (res.headers.get('content-type')?.includes('event-stream')) await res.body?.cancel();
      else text = (await res.text()).slice(0, 300);
      if (res.status >= 500 && !documented(path, res.status, text))
        result.unexpected.push({ request: label, status: res.status, body: text });
    } catch {
      // A refusal that closes the connection before the body was sent (413, 401): counted, not a failure.
      result.noAnswer++;
    }
  };

  const lane = async () => {
    while (next < opts.requests) {
      const n = next++;
      if (opts.every && n > 0 && n % opts.every.n === 0) await opts.every.run();
      await one();
      result.requests++;
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency ?? 4 }, lane));
  return result;
}

/** Signs in the fuzz's admin and the rest of what the fuzzer uses: a file, a folder, a share link, a job, a sub-user. */
export async function prepareTarget(url: string, routes: Route[]): Promise<FuzzTarget> {
  const email = 'fuzz-admin@example.test';
  const password = 'fuzz admin password';
  const signup = await fetch(`${url}/api/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password, name: 'Fuzz' }),
  });
  if (signup.status !== 200) throw new Error(`signup failed: ${signup.status}`);
  const cookie = /token=[^;]+/.exec(signup.headers.get('set-cookie') ?? '')![0];
  const call = async (method: string, path: string, body?: unknown) => {
    const init: RequestInit = { method, headers: { cookie } };
    if (body instanceof FormData) init.body = body;
    else if (body !== undefined) {
      init.body = JSON.stringify(body);
      (init.headers as Record<string, string>)['content-type'] = 'application/json';
    }
    const res = await fetch(url + path, init);
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<any>;
  };
  const folder = await call('POST', '/api/files/folder', { name: 'fuzz' });
  const form = new FormData();
  form.append('parentId', folder.id);
  form.append('file', new File(['fuzz content '.repeat(1000)], 'fuzz.txt'));
  const file = await call('POST', '/api/files/upload', form);
  const links = (await call('POST', '/api/files/share', { ids: [folder.id], shared: true })).links;
  const job = await call('POST', '/api/files/copy', { ids: [file.id] });
  const sub = await call('POST', '/api/user/sub-users', {
    email: 'fuzz-sub@example.test',
    password: 'fuzz sub password',
    name: 'Sub',
    permissions: [],
  });
  const subLogin = await fetch(`${url}/api/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'fuzz-sub@example.test', password: 'fuzz sub password' }),
  });
  const sessions = await call('GET', '/api/sessions');
  return {
    url,
    routes,
    admin: { email, password, cookie },
    subCookie: /token=[^;]+/.exec(subLogin.headers.get('set-cookie') ?? '')![0],
    ids: {
      file: file.id,
      folder: folder.id,
      shareToken: /\/s\/([^/?#]+)/.exec(links[folder.id])![1]!,
      jobId: job.jobId,
      sessionId: sessions.sessions[0].id,
      subUserId: sub.subUser.id,
    },
  };
}

/** Puts back the settings the fuzzer may have changed that would lock it out (desktop-only, share domain). */
export async function resetSettings(url: string, cookie: string): Promise<void> {
  const put = (path: string, body: unknown) =>
    fetch(url + path, {
      method: 'PUT',
      headers: { cookie, 'content-type': 'application/json', 'x-desktop-client': '1' },
      body: JSON.stringify(body),
    }).then((r) => r.arrayBuffer());
  await put('/api/user/desktop-only-access-config', { enabled: false });
  await put('/api/user/share-base-url-config', { url: null });
}
