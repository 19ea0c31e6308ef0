import { rawRequest } from '../helpers/raw-http.ts';
import type { FuzzTarget, Route } from './fuzz.ts';
import { Rng } from './random.ts';

/**
 * A fixed matrix over every route (the sibling of the random fuzz in fuzz.ts): each route gets the same
 * kinds of bad input every run — wrong JSON types per field, extreme numbers, long and odd strings,
 * prototype keys, deep nesting, broken bodies and types, duplicate and mistyped query values, odd path
 * segments, huge and odd headers — as the admin, a sub-user without permissions and nobody.
 */

export interface MatrixTarget extends FuzzTarget {
  /** HTTP Basic for WebDAV and the Nextcloud door: the admin's and the sub-user's app passwords. */
  dav: { admin: string; sub: string };
  /** The admin's login id: the Nextcloud doors name the login in their paths (/remote.php/dav/uploads/<login id>/…). */
  loginId: string;
  /** An item of another account, which every caller here must get 404 for. */
  foreignId: string;
  /** The app's own OpenAPI document: each route's body and query schemas, to break one field at a time. */
  openapi: { paths: Record<string, Record<string, Operation>> };
}

interface Schema {
  type?: string | string[];
  properties?: Record<string, Schema>;
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  enum?: unknown[];
  const?: unknown;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  format?: string;
}
interface Operation {
  parameters?: Array<{ name: string; in: string; schema?: Schema }>;
  requestBody?: { content?: Record<string, { schema?: Schema }> };
}

export interface MatrixResult {
  requests: number;
  byStatus: Record<string, number>;
  /** Answers of 500 or more, with the request that got each. */
  failures: Array<{ request: string; status: number; body: string }>;
  /** Requests answered later than `slowMs`, or not at all (status 0). */
  slow: Array<{ request: string; ms: number; status: number }>;
  /** Answers of 200 to 299 to a request naming another account's item in its path: each should be a 404. */
  leaks: Array<{ request: string; status: number; body: string }>;
  /** /api answers of 400 to 499 whose body is not JSON with a message (or a rate limiter's error). */
  unreadable: Array<{ request: string; status: number; body: string }>;
}

/** Every body field name the contract declares (src/contract, src/http): each gets each wrong type. */
const FIELDS = (
  'accountId action all allowPasswordChange appVersion appid clientId code content contentSearch coverItemId cursor ' +
  'currentPassword davAccountPasswords desktopOnlyAccess disabled docserver email enabled events expiresAt expiry fileSize ' +
  'filetype forcesavetype graceMinutes group groupId groups hidden hideFileExtensions id ids include includeShared itemId ' +
  'itemIds jobId jwtSecret key kind knownProxies lastEventId limit maxBytes maxPerFile mfaCode name newPassword next ' +
  'oldPassword optOut order owner parentId password path peopleSharing permissions platform q query readOnly ' +
  'removePasskeys response retentionDays revokeAppPasswords role setupCode shared signupEnabled since size sort sortBy ' +
  'source starred status storageLimit storageKeys fileIds targetUserId token transports type url user users ' +
  'versionsEnabled whose relativePaths lastModifiedTimes description secret maxDownloads'
).split(' ');

const MB = 1024 * 1024;
/** One wrong value for every field at once: each as JSON text. */
const WRONG_EVERYWHERE = [
  '"x"',
  '1',
  '-1',
  '0.5',
  '1e308',
  '1e309',
  '-1e309',
  '9007199254740993',
  '"NaN"',
  '"1e309"',
  '"Infinity"',
  'null',
  'true',
  '[]',
  '{}',
  '[null]',
  '[{}]',
  '[[[]]]',
  '"\\ud800"',
  '"\\udfff\\ud800"',
  '"\\u0000"',
  '"\\u202e\\u200f\\u061c"',
  '"../../etc/passwd"',
  `"${'a'.repeat(20_000)}"`,
  '{"__proto__":{"x":1}}',
];

/** What a field may get in a mixed body: plausible values next to wrong ones, so some bodies get past validation. */
function mixedValue(rng: Rng, ids: FuzzTarget['ids'], foreignId: string): unknown {
  return rng.pick<unknown>([
    ids.file,
    ids.folder,
    foreignId,
    [ids.file],
    [ids.folder, foreignId],
    [foreignId],
    'name.txt',
    'a@b.example',
    'files.download',
    ['files.download'],
    true,
    false,
    0,
    1,
    -1,
    2 ** 53 + 1,
    1.5,
    1e308,
    Number.MAX_SAFE_INTEGER,
    'NaN',
    '1e309',
    '7d',
    'never',
    '',
    ' ',
    '\ud800',
    '\u0000',
    '\u202egnp.exe',
    'x'.repeat(300),
    'http://127.0.0.1:1/x',
    'javascript:alert(1)',
    '2026-01-01T00:00:00Z',
    'not a date',
    null,
    [],
    {},
    [null],
    { __proto__: null, constructor: { prototype: { admin: true } } },
  ]);
}

/** JSON texts a parser or schema must refuse politely. */
const BROKEN_JSON: Array<{ body: string; type?: string; label: string }> = [
  { body: '{', label: 'truncated JSON' },
  { body: '{"ids":[1,2', label: 'truncated array' },
  { body: "{'a':1}", label: 'single quotes' },
  { body: '{"a":1}garbage', label: 'trailing garbage' },
  { body: 'null', label: 'null body' },
  { body: '[]', label: 'array body' },
  { body: '"text"', label: 'string body' },
  { body: '12345678901234567890', label: 'number body' },
  { body: 'true', label: 'boolean body' },
  { body: '', label: 'empty body' },
  { body: '{"ids":["x"]}', type: '', label: 'no Content-Type' },
  { body: '{"ids":["x"]}', type: 'text/plain', label: 'text/plain JSON' },
  { body: '{"ids":["x"]}', type: 'application/json; charset=utf-16', label: 'utf-16 charset' },
  { body: 'ids=x&ids=y&name=z', type: 'application/x-www-form-urlencoded', label: 'form body' },
  { body: '\u0000\u0001\u0002', type: 'application/json', label: 'control bytes' },
  { body: '['.repeat(10_000) + ']'.repeat(10_000), label: '10,000 nested arrays' },
  { body: '{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000), label: '10,000 nested objects' },
  { body: '['.repeat(10_000), label: '10,000 unclosed arrays' },
  { body: '{"__proto__":{"isAdmin":true,"admin":true},"constructor":{"prototype":{"admin":true}}}', label: '__proto__ keys' },
  { body: `{"name":"${'n'.repeat(MB - 64)}","ids":["${'i'.repeat(100)}"]}`, label: '1 MB string field' },
  { body: `{"a":1,"a":2,"ids":"x","ids":["y"]}`, label: 'duplicate keys' },
];

/** Values a query parameter may get: wrong types, extremes, odd characters, raw percent-escapes. */
const QUERY_VALUES = [
  'abc',
  '-1',
  '0',
  '0.5',
  '1e309',
  'NaN',
  '99999999999999999999',
  '%00',
  '%ED%A0%80',
  '%C0%AE%C0%AE%C0%AF',
  '%',
  '%E2%80%AE',
  '[]',
  '{}',
];
const QUERY_KEYS = [
  'limit',
  'cursor',
  'sortBy',
  'order',
  'parentId',
  'q',
  'query',
  'since',
  'before',
  'kind',
  'type',
  'inline',
  'page',
  'id',
];

/** Path segments for every `:param` and `*`: as sent on the wire. */
const SEGMENTS = [
  '%00',
  'a%00b',
  '%2F',
  '..%2F..%2Fetc%2Fpasswd',
  '..',
  '%2e%2e',
  '%C0%AE%C0%AE%C0%AF',
  '%ED%A0%80',
  '%E2%80%AE',
  '%',
  '%zz',
  'x'.repeat(3000),
  '-1',
  '1e309',
];

const AUTHORIZATIONS = [
  'Basic',
  'Basic !!!',
  `Basic ${btoa('no-colon')}`,
  `Basic ${btoa(':')}`,
  `Basic ${btoa(`${'u'.repeat(3000)}:${'p'.repeat(3000)}`)}`,
  'Digest username="a", realm="b"',
  'Negotiate YII=',
  'Bearer',
  'Bearer  x',
  'bearer x.y.z',
  'Token abc',
  `Bearer ${'a'.repeat(7000)}`,
];
const ODD_HEADERS: Array<Record<string, string>> = [
  { range: `bytes=${Array.from({ length: 800 }, (_, i) => `${i * 3}-${i * 3 + 1}`).join(',')}` },
  { range: 'bytes=99999999999999999999999-1' },
  { range: 'bytes=-99999999999999999999' },
  { 'if-match': `"${'e'.repeat(6000)}"` },
  { 'if-match': Array.from({ length: 500 }, (_, i) => `"e${i}"`).join(', ') },
  { 'if-none-match': 'W/"x", *, "' },
  { 'if-modified-since': 'not a date' },
  { 'if-range': '"x"', range: 'bytes=0-1' },
  { cookie: `token=${'t'.repeat(7000)}` },
  { cookie: 'token=a; token=b; token=' },
  { cookie: Array.from({ length: 400 }, (_, i) => `c${i}=v`).join('; ') },
  { 'x-forwarded-for': Array.from({ length: 300 }, () => '1.2.3.4').join(', ') },
  { 'last-event-id': 'x'.repeat(5000) },
  { accept: `${'text/x;q=0.1, '.repeat(300)}*/*` },
  { 'accept-language': 'x'.repeat(7000) },
];

/** WebDAV methods with the headers and bodies that steer them. */
const DAV_METHODS = [
  'PROPFIND',
  'PROPPATCH',
  'MKCOL',
  'COPY',
  'MOVE',
  'LOCK',
  'UNLOCK',
  'PUT',
  'DELETE',
  'GET',
  'HEAD',
  'OPTIONS',
  'POST',
  'REPORT',
  'SEARCH',
  'PATCH',
];
const DAV_HEADERS: Array<Record<string, string>> = [
  { depth: 'x' },
  { 'oc-total-length': '0' },
  { depth: '-1' },
  { depth: 'infinity' },
  { destination: 'http://evil.example/dav/x' },
  { destination: '/dav/%00' },
  { destination: '%%%' },
  { destination: `/dav/${'d/'.repeat(2000)}x` },
  { destination: '/remote.php/dav/files/x/..%2F..%2Fy' },
  { overwrite: 'maybe' },
  { timeout: 'Second-99999999999999999999' },
  { timeout: 'Infinite, Second-x' },
  { if: '(<opaquelocktoken:x>' },
  { if: `(${'<x> '.repeat(2000)})` },
  { 'lock-token': '<' },
  { 'oc-total-length': '-5' },
  { 'x-oc-mtime': '1e309' },
  { 'oc-checksum': 'SHA1:' },
  { 'content-range': 'bytes 5-1/0' },
];
const DAV_BODIES = [
  '<',
  '<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop><D:getetag/></D:prop></D:propfind>',
  '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">]><x>&d;&d;&d;</x>',
  `<?xml version="1.0"?>${'<a>'.repeat(10_000)}${'</a>'.repeat(10_000)}`,
  `<D:propertyupdate xmlns:D="DAV:"><D:set><D:prop><x:y xmlns:x="z">${'v'.repeat(100_000)}</x:y></D:prop></D:set></D:propertyupdate>`,
  '<D:lockinfo xmlns:D="DAV:"><D:lockscope/><D:locktype/></D:lockinfo>',
  '<D:propfind xmlns:D="DAV:"><D:prop><D:x xmlns:D=""/></D:prop></D:propfind>',
  '\u0000\ud800',
  '{"json":true}',
];

type Who = 'admin' | 'sub' | 'anon';

/** `n` of the list for route number `index`, a different window for each route, so every entry is sent to many routes. */
const share = <T>(list: readonly T[], index: number, n: number): T[] =>
  Array.from({ length: Math.min(n, list.length) }, (_, i) => list[(index * n + i) % list.length]!);

/** A value the schema accepts, with real ids where a field names one, so that breaking one field reaches past the rest. */
function plausible(schema: Schema | undefined, name: string, ids: FuzzTarget['ids'], depth = 0): unknown {
  if (!schema || depth > 4) return 'x';
  if (schema.const !== undefined) return schema.const;
  if (schema.enum) return schema.enum[0];
  const alt = schema.anyOf ?? schema.oneOf;
  if (alt) return plausible(alt.find((s) => s.type !== 'null') ?? alt[0], name, ids, depth + 1);
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  if (type === 'object' || schema.properties) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(schema.properties ?? {})) out[k] = plausible(v, k, ids, depth + 1);
    return out;
  }
  if (type === 'array')
    return Array.from({ length: Math.max(1, schema.minItems ?? 1) }, () => plausible(schema.items, name, ids, depth + 1));
  if (type === 'boolean') return !/disabled|desktopOnly|enabled/i.test(name);
  if (type === 'integer' || type === 'number') return Math.min(Math.max(schema.minimum ?? 1, 1), schema.maximum ?? 1);
  let text = /email/i.test(name)
    ? 'fuzz-new@example.test'
    : /url/i.test(name) || schema.format === 'uri'
      ? 'http://127.0.0.1:1/fuzz'
      : /^(ids?|itemIds?|fileIds?|parentId|itemId|coverItemId)$/.test(name)
        ? ids.file
        : schema.format === 'date-time'
          ? '2030-01-01T00:00:00.000Z'
          : /password|code/i.test(name)
            ? 'wrong password 12'
            : 'fuzz value';
  if (schema.minLength && text.length < schema.minLength) text = text.padEnd(schema.minLength, 'x');
  return schema.maxLength ? text.slice(0, schema.maxLength) : text;
}

/** What each field gets in turn, the rest of the body left plausible: every JSON type for each field… */
const WRONG_TYPES: unknown[] = ['x', 1, null, true, [], {}];
/** …and a window of these extremes and odd strings, a different one for each field. */
const WRONG_VALUES: unknown[] = [
  -1,
  0.5,
  1e308,
  2 ** 53 + 1,
  'NaN',
  '1e309',
  '-0',
  [null],
  [[]],
  [{}],
  '\\ud800',
  '\\u0000',
  '\\u202e\\u200f',
  '../../etc/passwd',
  'x'.repeat(5000),
  { __proto__: null, constructor: { prototype: { admin: true } } },
];

function schemaCases(route: Route, index: number, target: MatrixTarget, rng: Rng, base: string): Case[] {
  const path = route.path.replace(/:([^/]+)/g, '{$1}').replace(/\/\*$/, '/{path}');
  const op = target.openapi.paths[path]?.[route.method.toLowerCase()];
  if (!op) return [];
  const out: Case[] = [];
  const schema = op.requestBody?.content?.['application/json']?.schema;
  if (schema?.properties) {
    const good = plausible(schema, '', target.ids) as Record<string, unknown>;
    out.push({
      method: route.method,
      path: base,
      who: 'admin',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(good),
      label: 'plausible body',
    });
    Object.keys(schema.properties).forEach((field, f) => {
      const first = f === 0;
      const wrong = [...WRONG_TYPES, ...share(WRONG_VALUES, index + f, 6), 'INFINITY', 'MISSING', ...(first ? ['MEGABYTE'] : [])];
      wrong.forEach((v, i) => {
        const { [field]: _dropped, ...rest } = good;
        let body: string;
        if (v === 'MISSING') body = JSON.stringify(rest);
        else if (v === 'INFINITY') body = JSON.stringify({ ...rest, [field]: 0 }).replace(`"${field}":0`, `"${field}":1e309`);
        else if (v === 'MEGABYTE') body = JSON.stringify({ ...rest, [field]: 'm'.repeat(1024 * 1024 - 2048) });
        else body = JSON.stringify({ ...rest, [field]: v }).replace(/\\\\u/g, '\\u');
        out.push({
          method: route.method,
          path: base,
          who: i % 8 === 7 ? 'sub' : 'admin',
          headers: { 'content-type': 'application/json' },
          body,
          label: `${field}=${String(typeof v === 'string' ? v : JSON.stringify(v)).slice(0, 30)}`,
        });
      });
    });
  }
  const query = (op.parameters ?? []).filter((p) => p.in === 'query');
  if (query.length > 0) {
    const good = Object.fromEntries(query.map((p) => [p.name, String(plausible(p.schema, p.name, target.ids))]));
    for (const p of query)
      for (const v of share(
        ['x', '-1', '0', '0.5', '1e309', 'NaN', '99999999999999999999', '%00', '%ED%A0%80', '%C0%AE', '%', '', 'a'.repeat(3000)],
        index,
        8,
      )) {
        const rest = Object.entries(good)
          .filter(([k]) => k !== p.name)
          .map(([k, val]) => `${k}=${encodeURIComponent(val)}`);
        out.push({
          method: route.method === 'ALL' ? 'GET' : route.method,
          path: `${base}?${[...rest, `${p.name}=${v}`, `${p.name}=${rng.pick(['1', 'x'])}`].join('&')}`,
          who: 'admin',
          label: `query ${p.name}=${v.slice(0, 20)}`,
        });
      }
  }
  return out;
}

interface Case {
  method: string;
  path: string;
  who: Who;
  headers?: Record<string, string>;
  body?: string;
  /** Sent over a raw socket: a GET with a body, which fetch() refuses to send. */
  raw?: boolean;
  label: string;
}

/** Requests that would end the admin's session or lock the fuzz out: sent without a session. */
const endsSession = (method: string, path: string) =>
  /^\/api\/(logout|logout-all|change-password)(\?|$)/.test(path) ||
  (method === 'DELETE' && /^\/api\/(sessions|user\/sub-users|user\/app-passwords)\//.test(path)) ||
  (method === 'DELETE' && /^\/ocs\/v2\.php\/core\/apppassword/.test(path));

const hasBody = (method: string) => !['GET', 'HEAD'].includes(method);

/** What follows each Nextcloud door: its folders, a file, a chunked upload and its chunks, a version, a trashed entry. */
const doorTails = (loginId: string) => [
  `${loginId}/`,
  `${loginId}/fuzz`,
  `${loginId}/fuzz/fuzz.txt`,
  `${loginId}/t1`,
  `${loginId}/t1/00001`,
  `${loginId}/t1/.file`,
  `${loginId}/versions/1`,
  `${loginId}/versions/99999999999999999/v`,
  `${loginId}/trash/x.d1`,
  `${loginId}/restore/x`,
];

/** The route's path with each parameter filled: a real id by default, or `segment` for all of them. */
function fill(route: Route, ids: FuzzTarget['ids'], segment?: string, loginId = '', rng?: Rng): string {
  const real: Record<string, string> = {
    id: ids.folder,
    itemId: ids.file,
    jobId: ids.jobId,
    token: ids.shareToken,
    sessionId: ids.sessionId,
    uploadId: 'u',
    versionId: 'v',
    accountId: ids.subUserId,
    groupId: 'g',
    deliveryId: 'd',
    name: 'index.js',
  };
  return route.path
    .replace(/:(\w+)/g, (_m, name: string) => segment ?? real[name] ?? 'x')
    .replace(/\*$/, segment ?? (route.path.startsWith('/remote.php/dav/') && rng ? rng.pick(doorTails(loginId)) : 'fuzz'));
}

function casesFor(route: Route, index: number, target: MatrixTarget, seed: number): Case[] {
  const rng = new Rng(seed + index * 7919);
  const ids = target.ids;
  const out: Case[] = [];
  const dav = route.method === 'ALL';
  const fromSchema = schemaCases(route, index, target, rng, fill(route, ids));
  out.push(...fromSchema);
  const methods = dav ? DAV_METHODS : [route.method];
  const method = () => rng.pick(methods);
  const base = fill(route, ids);
  const who = (i: number): Who => (['admin', 'admin', 'sub', 'anon'] as const)[i % 4]!;

  // Bodies: every field of the wrong type at once, broken JSON, mixed plausible and wrong fields.
  const bodyMethods = methods.filter(hasBody);
  if (bodyMethods.length > 0) {
    share(WRONG_EVERYWHERE, index, fromSchema.length > 0 ? 6 : 12).forEach((v, i) => {
      const m = rng.pick(bodyMethods);
      out.push({
        method: m,
        path: base,
        who: who(i),
        headers: { 'content-type': 'application/json' },
        body: `{${FIELDS.map((f) => `"${f}":${v}`).join(',')}}`,
        label: `every field ${v.slice(0, 40)}`,
      });
    });
    share(BROKEN_JSON, index, fromSchema.length > 0 ? 6 : 10).forEach((b, i) => {
      const headers: Record<string, string> = {};
      if (b.type !== '') headers['content-type'] = b.type ?? 'application/json';
      out.push({ method: rng.pick(bodyMethods), path: base, who: who(i), headers, body: b.body, label: b.label });
    });
    for (let i = 0; i < (fromSchema.length > 0 ? 4 : 12); i++) {
      const body: Record<string, unknown> = {};
      for (let n = rng.int(1, 6); n > 0; n--) body[rng.pick(FIELDS)] = mixedValue(rng, ids, target.foreignId);
      out.push({
        method: rng.pick(bodyMethods),
        path: base,
        who: i < 9 ? 'admin' : who(i),
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        label: 'mixed fields',
      });
    }
  }
  // A body on a GET (raw: fetch() will not send one).
  if (methods.includes('GET') && !/events|push/.test(route.path))
    out.push({
      method: 'GET',
      path: base,
      who: 'admin',
      headers: { 'content-type': 'application/json' },
      body: '{"ids":',
      raw: true,
      label: 'body on GET',
    });

  // HEAD of every GET (the headers alone, at once, whatever the body would be) and a CORS preflight from elsewhere.
  if (methods.includes('GET'))
    out.push({ method: 'HEAD', path: base, who: 'admin', headers: { range: 'bytes=0-1' }, label: 'HEAD of a GET' });
  out.push({
    method: 'OPTIONS',
    path: base,
    who: who(index),
    headers: {
      origin: 'http://evil.example',
      'access-control-request-method': 'DELETE',
      'access-control-request-headers': 'x-a, '.repeat(500),
    },
    label: 'CORS preflight',
  });

  // Query strings: duplicates, wrong types, odd escapes.
  const keys = QUERY_KEYS;
  out.push({
    method: method(),
    path: `${base}?${keys.map((k) => `${k}=1&${k}=2`).join('&')}`,
    who: 'admin',
    label: 'duplicate query keys',
  });
  out.push({
    method: method(),
    path: `${base}?${keys.map((k) => `${k}[]=1&${k}[a]=2`).join('&')}`,
    who: 'admin',
    label: 'bracketed query keys',
  });
  out.push({ method: method(), path: `${base}?q=${'a'.repeat(6000)}&limit=${'9'.repeat(6000)}`, who: 'admin', label: 'long query values' });
  share(QUERY_VALUES, index, 4).forEach((v, i) => {
    out.push({
      method: method(),
      path: `${base}?${keys.map((k) => `${k}=${v}`).join('&')}`,
      who: who(i),
      label: `query values ${v.slice(0, 20)}`,
    });
  });

  // Path segments: odd shapes, another account's id.
  if (/[:*]/.test(route.path)) {
    [...share(SEGMENTS, index, 8), target.foreignId].forEach((s, i) => {
      out.push({ method: method(), path: fill(route, ids, s), who: who(i), label: `segment ${s.slice(0, 30)}` });
    });
  }

  // Headers: huge and odd ones, odd Authorization schemes.
  share(ODD_HEADERS, index, 5).forEach((h, i) =>
    out.push({ method: method(), path: base, who: who(i), headers: h, label: `header ${Object.keys(h).join(',')}` }),
  );
  for (const a of share(AUTHORIZATIONS, index, 3))
    out.push({ method: method(), path: base, who: 'anon', headers: { authorization: a }, label: `authorization ${a.slice(0, 20)}` });

  // WebDAV: each method with the headers and bodies that steer it.
  if (dav) {
    const door = () => fill(route, ids, undefined, target.loginId, rng);
    DAV_METHODS.forEach((m, i) => {
      for (const w of ['admin', 'sub'] as const) {
        const h = DAV_HEADERS[(i + (w === 'sub' ? 7 : 0)) % DAV_HEADERS.length]!;
        out.push({ method: m, path: door(), who: w, headers: h, body: hasBody(m) ? rng.pick(DAV_BODIES) : undefined, label: `dav ${m}` });
      }
    });
    DAV_HEADERS.forEach((h, i) =>
      out.push({ method: method(), path: door(), who: who(i), headers: h, body: rng.pick(DAV_BODIES), label: 'dav headers' }),
    );
    DAV_BODIES.forEach((b, i) =>
      out.push({
        method: rng.pick(['PROPFIND', 'PROPPATCH', 'LOCK', 'REPORT', 'SEARCH']),
        path: door(),
        who: who(i),
        body: b,
        label: 'dav body',
      }),
    );
  }
  return out;
}

function credentials(target: MatrixTarget, who: Who, path: string): Record<string, string> {
  if (who === 'anon') return {};
  const door = /^\/(dav|remote\.php|ocs|index\.php|status\.php)/.test(path);
  if (door) return { authorization: who === 'admin' ? target.dav.admin : target.dav.sub };
  return { cookie: who === 'admin' ? target.admin.cookie : target.subCookie };
}

/** Whether an answer of 500 or more is one the interface documents (see documented() in fuzz.ts). */
function documented(method: string, path: string, status: number, body: string): boolean {
  // RFC 4918 9.8.5: a COPY or MOVE whose Destination is on another server; 9.2: a PROPPATCH over the properties' room.
  if (status === 502 && (method === 'COPY' || method === 'MOVE') && /destination is (on another|not on this)/.test(body)) return true;
  if (status === 507 && method === 'PROPPATCH' && body.includes('WebDAV properties')) return true;
  if (status === 502 && path.startsWith('/api/version/latest')) return true;
  if (status === 500 && path.startsWith('/api/files/jobs/') && body.includes('Background file operation failed')) return true;
  return false;
}

/** Whether an /api 4xx body tells a person what went wrong: JSON with a message, or a limiter's error. */
function readable(body: string): boolean {
  try {
    const parsed = JSON.parse(body) as { message?: unknown; error?: unknown };
    const text = parsed.message ?? parsed.error;
    return typeof text === 'string' && text.trim().length > 0;
  } catch {
    return false;
  }
}

export async function runMatrix(
  target: MatrixTarget,
  opts: {
    seed: number;
    slowMs: number;
    concurrency?: number;
    every?: { n: number; run: () => Promise<void> };
    only?: (r: Route) => boolean;
  },
): Promise<MatrixResult> {
  const cases = target.routes.filter((r) => opts.only?.(r) ?? true).flatMap((r, i) => casesFor(r, i, target, opts.seed));
  const result: MatrixResult = { requests: 0, byStatus: {}, failures: [], slow: [], unreadable: [], leaks: [] };
  let next = 0;
  const one = async (c: Case) => {
    const who: Who = c.who !== 'anon' && endsSession(c.method, c.path) ? 'anon' : c.who;
    const headers = { ...credentials(target, who, c.path), ...c.headers };
    const label = `${c.method} ${c.path.slice(0, 140)} (${who}, ${c.label})`;
    const started = performance.now();
    let status = 0;
    let text = '';
    let type = '';
    try {
      if (c.raw) {
        const host = new URL(target.url).host;
        const head = [`${c.method} ${c.path} HTTP/1.1`, `Host: ${host}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
        head.push(`Content-Length: ${Buffer.byteLength(c.body ?? '')}`, 'Connection: close');
        const res = await rawRequest(target.url, `${head.join('\r\n')}\r\n\r\n`, {
          body: Buffer.from(c.body ?? ''),
          timeoutMs: opts.slowMs * 2,
        });
        status = res.status;
        text = res.body.toString('utf8');
        type = res.headers['content-type'] ?? '';
      } else {
        const res = await fetch(target.url + c.path, {
          method: c.method,
          headers,
          // fetch() sends no body on GET or HEAD: those go raw (body on GET).
          body: hasBody(c.method) ? c.body : undefined,
          redirect: 'manual',
          signal: AbortSignal.timeout(opts.slowMs * 2),
        });
        status = res.status;
        type = res.headers.get('content-type') ?? '';
        if (type.includes('event-stream')) await res.body?.cancel();
        else text = await res.text();
      }
    } catch {
      // Closed before an answer: a refusal that does not read the body (413) is fine if it came quickly.
    }
    const ms = performance.now() - started;
    result.requests++;
    result.byStatus[status] = (result.byStatus[status] ?? 0) + 1;
    if (ms > opts.slowMs || (status === 0 && ms > opts.slowMs / 2)) result.slow.push({ request: label, ms: Math.round(ms), status });
    if (status >= 500 && !documented(c.method, c.path, status, text))
      result.failures.push({ request: label, status, body: text.slice(0, 400) });
    if (
      status >= 400 &&
      status < 500 &&
      c.path.startsWith('/api/') &&
      c.method !== 'HEAD' &&
      !type.startsWith('text/html') &&
      !readable(text)
    )
      result.unreadable.push({ request: label, status, body: `${type} ${text.slice(0, 200)}` });
  };
  const lane = async () => {
    while (next < cases.length) {
      const n = next++;
      if (opts.every && n > 0 && n % opts.every.n === 0) await opts.every.run();
      await one(cases[n]!);
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency ?? 4 }, lane));
  return result;
}

/** The random fuzz's target, plus app passwords for the WebDAV doors and a folder of another account. */
export async function prepareMatrixTarget(base: FuzzTarget): Promise<MatrixTarget> {
  const post = async (path: string, body: unknown, cookie?: string) => {
    const res = await fetch(base.url + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(cookie ? { cookie } : {}) },
      body: JSON.stringify(body),
    });
    if (res.status >= 300) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return { json: (await res.json()) as any, cookie: /token=[^;]+/.exec(res.headers.get('set-cookie') ?? '')?.[0] };
  };
  const basic = (email: string, password: string) => `Basic ${Buffer.from(`${email}:${password}`).toString('base64')}`;
  const adminApp = await post('/api/user/app-passwords', { name: 'fuzz', password: base.admin.password }, base.admin.cookie);
  const subApp = await post('/api/user/app-passwords', { name: 'fuzz', password: 'fuzz sub password' }, base.subCookie);
  await post('/api/user/signup-toggle', { enabled: true }, base.admin.cookie);
  const other = await post('/api/signup', { email: 'fuzz-other@example.test', password: 'fuzz other password', name: 'Other' });
  await post('/api/user/signup-toggle', { enabled: false }, base.admin.cookie);
  const folder = await post('/api/files/folder', { name: 'theirs' }, other.cookie);
  const profile = (await (await fetch(`${base.url}/api/profile`, { headers: { cookie: base.admin.cookie } })).json()) as { id: string };
  const openapi = (await (await fetch(`${base.url}/api/openapi.json`)).json()) as MatrixTarget['openapi'];
  return {
    ...base,
    openapi,
    loginId: profile.id,
    dav: { admin: basic(base.admin.email, adminApp.json.password), sub: basic('fuzz-sub@example.test', subApp.json.password) },
    foreignId: folder.json.id,
  };
}
