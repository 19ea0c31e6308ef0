import { json } from './client.ts';
import type { SeededLogin } from './seed.ts';
import type { TestServer } from './server.ts';

/** A WebDAV client speaking HTTP Basic with one login's email and password (an app password, normally). */
export class DavClient {
  constructor(
    readonly baseUrl: string,
    readonly email: string,
    readonly password: string,
  ) {}

  get authorization(): string {
    return `Basic ${Buffer.from(`${this.email}:${this.password}`).toString('base64')}`;
  }

  /** `path` below /dav/, as it goes on the wire (encode it yourself). */
  request(method: string, path: string, opts: { headers?: Record<string, string>; body?: RequestInit['body'] } = {}): Promise<Response> {
    return fetch(`${this.baseUrl}/dav/${path.replace(/^\//, '')}`, {
      method,
      headers: { authorization: this.authorization, ...opts.headers },
      body: opts.body,
      redirect: 'manual',
    });
  }

  put(path: string, body: RequestInit['body'], headers: Record<string, string> = {}) {
    return this.request('PUT', path, { body, headers });
  }

  propfind(path: string, depth: '0' | '1' | 'infinity' = '1', body?: string) {
    return this.request('PROPFIND', path, { headers: { depth, 'content-type': 'application/xml' }, body });
  }

  /** The hrefs a Depth 1 PROPFIND lists (the folder itself first). */
  async list(path: string): Promise<string[]> {
    const res = await this.propfind(path);
    if (res.status !== 207) throw new Error(`PROPFIND ${path}: ${res.status} ${await res.text()}`);
    return [...(await res.text()).matchAll(/<D:href>([^<]*)<\/D:href>/g)].map((m) => decodeURIComponent(m[1]!));
  }
}

/** A new app password for the login (its password given again, as a session signed in long ago must), and a WebDAV client using it. */
export async function davLogin(t: TestServer, login: SeededLogin, name = 'test device'): Promise<DavClient & { id: string }> {
  const res = await login.client.post('/api/user/app-passwords', { name, password: login.password });
  if (res.status !== 201) throw new Error(`app password: ${res.status} ${await res.text()}`);
  const body = await json(res);
  return Object.assign(new DavClient(t.url, login.email, body.password), { id: body.id as string });
}

/** One resource of a PROPFIND answer: its href and the found properties by local name. */
export type PropfindRow = { href: string; props: Record<string, string> };

/** The resources of a multistatus answer, with the properties found (200) in each. */
export function propfindRows(xml: string): PropfindRow[] {
  return [...xml.matchAll(/<D:response>([\s\S]*?)<\/D:response>/g)].map((m) => {
    const href = decodeURIComponent(/<D:href>([^<]*)<\/D:href>/.exec(m[1]!)![1]!);
    const ok = /<D:propstat><D:prop>([\s\S]*?)<\/D:prop><D:status>HTTP\/1.1 200/.exec(m[1]!)?.[1] ?? '';
    const props: Record<string, string> = {};
    for (const p of ok.matchAll(/<(?:D|x):([\w-]+)(?: xmlns:x="[^"]*")?(?:\/>|>([\s\S]*?)<\/(?:D|x):\1>)/g)) props[p[1]!] = p[2] ?? '';
    return { href, props };
  });
}

/** A Nextcloud app: HTTP Basic with an app password, on the /remote.php and /index.php paths. */
export class NextcloudApp {
  constructor(
    readonly dav: DavClient,
    readonly userId: string,
  ) {}
  send(method: string, path: string, headers: Record<string, string> = {}, body?: string) {
    return fetch(`${this.dav.baseUrl}${path}`, { method, headers: { authorization: this.dav.authorization, ...headers }, body });
  }
  /** `path` below the login's /remote.php/dav/files/<id>/, as it goes on the wire. */
  files(method: string, path: string, headers: Record<string, string> = {}, body?: string) {
    return this.send(method, `/remote.php/dav/files/${this.userId}/${path}`, headers, body);
  }
}
