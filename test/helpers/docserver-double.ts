import { jwtVerify, SignJWT } from 'jose';

/**
 * A document-server double: a real HTTP server on loopback that speaks the protocol of an
 * OnlyOffice-compatible Docs server as Coffer uses it (checked against api.onlyoffice.com; see docs/documents.md,
 * "Editing documents"). It is not the editor: it does the server's half of each exchange.
 *
 * - `open(config, token)` is what the server does when a browser opens the editor: it verifies the
 *   config's JWT with the shared secret, reads the config from the token, fetches `document.url` and
 *   remembers the session (key → callbackUrl).
 * - `POST /command` (and `/coauthoring/CommandService.ashx`, the path before 8.2) takes a `{token}` body
 *   signed with the secret. `forcesave` answers `error` 0 when an edit is pending (then calls the
 *   callback with status 6, forcesavetype 0, as the real server does, after answering), 4 when nothing
 *   changed, 1 for a key it has no session for, 6 for a bad token; `missingCommandPath` makes /command 404.
 * - `callback(key, status)` posts a callback to the session's callbackUrl, signed the way the server's
 *   outbox signs: the body's fields in a `token` field and, wrapped in `payload`, in `Authorization:
 *   Bearer` (or only one, none, or with another secret). Edited versions are served from its own
 *   `/cache/files/...` URLs.
 * - `/web-apps/apps/api/documents/api.js` defines a small `DocsAPI.DocEditor` that frames the double's
 *   editor page, which opens the document as above and shows its title: enough for a browser test.
 */
export interface CallbackOptions {
  sign?: 'both' | 'body' | 'header' | 'none';
  /** Sign with this secret instead of the shared one. */
  secret?: string;
  /** Post to this URL instead of the session's callbackUrl. */
  callbackUrl?: string;
}

interface Session {
  callbackUrl: string;
  fileType: string;
  title: string;
  mode: string;
  userId: string;
  /** The document as fetched from `document.url`. */
  opened: Uint8Array;
}

interface Command {
  path: string;
  shardkey: string | null;
  payload: Record<string, unknown> | null;
}

const EXPIRES_IN = '5m';

export class DocserverDouble {
  readonly sessions = new Map<string, Session>();
  readonly commands: Command[] = [];
  /** Requests for edited versions this double served. */
  servedEdits = 0;
  /** Make /command answer 404, as servers before 8.2 do. */
  missingCommandPath = false;
  /** Answer every forcesave with this error code instead of the natural one. */
  commandError: number | null = null;
  private readonly edits = new Map<string, { bytes: Uint8Array; midway?: () => Promise<void> }>();
  private readonly pendingEdit = new Map<string, string>();
  private readonly redirects = new Map<string, string>();
  private readonly inFlight = new Set<Promise<unknown>>();
  private editCount = 0;

  private constructor(
    private readonly server: ReturnType<typeof Bun.serve>,
    readonly secret: string,
  ) {}

  static start(secret = 'docserver-shared-secret'): DocserverDouble {
    let double: DocserverDouble | null = null;
    const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (req) => double!.handle(req) });
    double = new DocserverDouble(server, secret);
    return double;
  }

  get url(): string {
    return `http://127.0.0.1:${this.server.port}`;
  }

  /** Opens the editor for a config as the document server does; throws when its token does not verify or the fetch fails. */
  async open(config: unknown, token: string): Promise<Uint8Array> {
    const signed = await this.verify(token);
    if (!signed) throw new Error('config token does not verify with the shared secret');
    const c = signed as {
      document: { url: string; key: string; fileType: string; title: string };
      editorConfig: { callbackUrl: string; mode: string; user: { id: string } };
    };
    if (JSON.stringify(stripToken(config)) !== JSON.stringify(stripToken(signed)))
      throw new Error('the signed config differs from the one sent');
    const res = await fetch(c.document.url);
    if (res.status !== 200) throw new Error(`document.url answered ${res.status}: ${await res.text()}`);
    const opened = new Uint8Array(await res.arrayBuffer());
    this.sessions.set(c.document.key, {
      callbackUrl: c.editorConfig.callbackUrl,
      fileType: c.document.fileType,
      title: c.document.title,
      mode: c.editorConfig.mode,
      userId: c.editorConfig.user.id,
      opened,
    });
    return opened;
  }

  /**
   * Serves `bytes` as an edited version of `key` and answers its URL (a new URL for every edit, as the server
   * does). `midway` runs after the first half of the body is sent, before the rest.
   */
  edit(key: string, bytes: Uint8Array, midway?: () => Promise<void>): string {
    const path = `/cache/files/${key}_${++this.editCount}/output.${this.sessions.get(key)?.fileType ?? 'bin'}/output`;
    this.edits.set(path, { bytes, midway });
    this.pendingEdit.set(key, path);
    return this.url + path;
  }

  /** A URL on this double that redirects (302) to `location`. */
  redirectTo(location: string): string {
    const path = `/redirect/${this.redirects.size + 1}`;
    this.redirects.set(path, location);
    return this.url + path;
  }

  /** Posts a callback for `key` with `status` and the body fields the server sends with it; `fields` adds or overrides. */
  async callback(key: string, status: number, fields: Record<string, unknown> = {}, opts: CallbackOptions = {}): Promise<Response> {
    const session = this.sessions.get(key);
    const callbackUrl = opts.callbackUrl ?? session?.callbackUrl;
    if (!callbackUrl) throw new Error(`no session for ${key}`);
    const users = session ? [session.userId] : [];
    const body: Record<string, unknown> = { key, status, users, actions: [{ type: status === 1 ? 1 : 0, userid: users[0] ?? 'x' }] };
    if (status === 2 || status === 3 || status === 6 || status === 7) {
      const path = this.pendingEdit.get(key);
      if (path) {
        body.url = this.url + path;
        body.filetype = session?.fileType;
        body.changesurl = `${this.url}/cache/files/${key}/changes.zip`;
      }
      if (status === 2 || status === 6) this.pendingEdit.delete(key);
    }
    Object.assign(body, fields);
    const secret = opts.secret ?? this.secret;
    const sign = opts.sign ?? 'both';
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    const sent: Record<string, unknown> = { ...body };
    if (sign === 'both' || sign === 'body') sent.token = await signed(body, secret);
    if (sign === 'both' || sign === 'header') headers.authorization = `Bearer ${await signed({ payload: body }, secret)}`;
    return fetch(callbackUrl, { method: 'POST', headers, body: JSON.stringify(sent) });
  }

  /** Resolves when the callbacks the double started on its own (after a forcesave) have been answered. */
  async settled(): Promise<void> {
    while (this.inFlight.size) await Promise.allSettled([...this.inFlight]);
  }

  stop(): void {
    this.server.stop(true);
  }

  private async verify(token: unknown): Promise<Record<string, unknown> | null> {
    if (typeof token !== 'string') return null;
    try {
      return (await jwtVerify(token, new TextEncoder().encode(this.secret), { algorithms: ['HS256'] })).payload as Record<string, unknown>;
    } catch {
      return null;
    }
  }

  private async handle(req: Request): Promise<Response> {
    const url = new URL(req.url);
    if (req.method === 'POST' && (url.pathname === '/command' || url.pathname === '/coauthoring/CommandService.ashx')) {
      const body = (await req.json().catch(() => null)) as { token?: unknown } | null;
      const payload = await this.verify(body?.token);
      this.commands.push({ path: url.pathname, shardkey: url.searchParams.get('shardkey'), payload });
      if (url.pathname === '/command' && this.missingCommandPath) return new Response('Not Found', { status: 404 });
      return Response.json(this.command(payload));
    }
    const edited = this.edits.get(url.pathname);
    if (req.method === 'GET' && edited) {
      this.servedEdits++;
      const { bytes, midway } = edited;
      const half = bytes.length >> 1;
      const body = midway
        ? new ReadableStream<Uint8Array>({
            async start(c) {
              c.enqueue(bytes.slice(0, half));
              await midway();
              c.enqueue(bytes.slice(half));
              c.close();
            },
          })
        : bytes;
      return new Response(body, { headers: { 'content-type': 'application/octet-stream' } });
    }
    const redirect = this.redirects.get(url.pathname);
    if (redirect) return new Response(null, { status: 302, headers: { location: redirect } });
    if (url.pathname === '/web-apps/apps/api/documents/api.js') {
      return new Response(API_JS.replace('ORIGIN', JSON.stringify(this.url)), { headers: { 'content-type': 'application/javascript' } });
    }
    if (url.pathname === '/web-apps/apps/editor') return this.editorPage(url.searchParams.get('config') ?? '');
    return new Response('Not Found', { status: 404 });
  }

  private command(payload: Record<string, unknown> | null): { error: number; key?: string } {
    if (!payload) return { error: 6 };
    const key = String(payload.key);
    if (payload.c !== 'forcesave') return { error: 5, key };
    if (this.commandError !== null) return { error: this.commandError, key };
    if (!this.sessions.has(key)) return { error: 1, key };
    if (!this.pendingEdit.has(key)) return { error: 4, key };
    // As the real server: answer first, then save through the callback (dropped if Coffer has stopped meanwhile).
    const call: Promise<unknown> = Bun.sleep(5)
      .then(() => this.callback(key, 6, { forcesavetype: 0 }).then((r) => r.text()))
      .catch((err: unknown) => err)
      .finally(() => this.inFlight.delete(call));
    this.inFlight.add(call);
    return { error: 0, key };
  }

  private async editorPage(configText: string): Promise<Response> {
    const page = (h1: string, p: string) =>
      new Response(`<!DOCTYPE html><html lang="en"><head><title>Editor</title></head><body><h1>${h1}</h1><p>${p}</p></body></html>`, {
        headers: { 'content-type': 'text/html; charset=utf-8' },
      });
    try {
      const config = JSON.parse(configText) as { token: string };
      await this.open(config, config.token);
      const { document, editorConfig } = (await this.verify(config.token)) as {
        document: { title: string; key: string };
        editorConfig: { mode: string };
      };
      return page(
        `Editing ${escapeHtml(document.title)}`,
        `${editorConfig.mode} · ${this.sessions.get(document.key)!.opened.byteLength} bytes`,
      );
    } catch (err) {
      return page('The editor could not open the document', escapeHtml(err instanceof Error ? err.message : String(err)));
    }
  }
}

function signed(claims: Record<string, unknown>, secret: string): Promise<string> {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuedAt()
    .setExpirationTime(EXPIRES_IN)
    .sign(new TextEncoder().encode(secret));
}

/** The config as the editor sends it, without the client-side fields the token does not cover. */
function stripToken(config: unknown): unknown {
  const { token: _t, type: _ty, width: _w, height: _h, iat: _i, ...rest } = config as Record<string, unknown>;
  return rest;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
}

// The part of api.js a page uses: DocsAPI.DocEditor replaces the placeholder with the editor's frame.
const API_JS = `window.DocsAPI = { DocEditor: function (id, config) {
  var frame = document.createElement('iframe');
  frame.src = ORIGIN + '/web-apps/apps/editor?config=' + encodeURIComponent(JSON.stringify(config));
  frame.title = 'Document editor';
  frame.name = 'frameEditor';
  frame.frameBorder = 0;
  frame.width = config.width || '100%';
  frame.height = config.height || '100%';
  var target = document.getElementById(id);
  target.parentNode.replaceChild(frame, target);
} };`;
