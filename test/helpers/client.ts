/** A fetch client bound to one base URL with a cookie jar, like one browser. */
export class TestClient {
  readonly cookies = new Map<string, string>();
  headers: Record<string, string> = {};

  constructor(readonly baseUrl: string) {}

  async request(path: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    for (const [k, v] of Object.entries(this.headers)) if (!headers.has(k)) headers.set(k, v);
    if (this.cookies.size && !headers.has('cookie')) {
      headers.set('cookie', [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '));
    }
    const res = await fetch(this.baseUrl + path, { ...init, headers, redirect: 'manual' });
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      const expired = attrs.some((a) => /^\s*max-age=0\s*$/i.test(a) || /^\s*expires=thu, 01 jan 1970/i.test(a));
      if (expired || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return res;
  }

  get(path: string, headers?: Record<string, string>) {
    return this.request(path, { headers });
  }

  post(path: string, body?: unknown, headers?: Record<string, string>) {
    return this.send('POST', path, body, headers);
  }

  put(path: string, body?: unknown, headers?: Record<string, string>) {
    return this.send('PUT', path, body, headers);
  }

  delete(path: string, headers?: Record<string, string>) {
    return this.request(path, { method: 'DELETE', headers });
  }

  send(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    const init: RequestInit = { method, headers: { ...headers } };
    if (body !== undefined) {
      init.body = JSON.stringify(body);
      (init.headers as Record<string, string>)['content-type'] = 'application/json';
    }
    return this.request(path, init);
  }

  /** A client with the same base URL and no cookies. */
  fresh(): TestClient {
    return new TestClient(this.baseUrl);
  }
}

export async function json<T = any>(res: Response): Promise<T> {
  const text = await res.text();
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new Error(`expected JSON (status ${res.status}), got: ${text.slice(0, 200)}`);
  }
}

/** `res` once it answered below 300; else an error naming `what`, the status and the body (a step of a longer scenario). */
export async function ok(what: string, res: Response | Promise<Response>): Promise<Response> {
  const r = await res;
  if (r.status >= 300) throw new Error(`${what}: ${r.status} ${await r.text()}`);
  return r;
}
