import { NotFoundError } from 'elysia';
import type { AppContext } from '../context.ts';
import { embeddedFile } from '../lib/embedded-file.ts';
import {
  BUNDLE_FILE_PREFIX,
  buildWebBundle,
  decodeWebBundle,
  newestSourceChange,
  type WebAsset,
  type WebBundle,
} from '../web/app-bundle.ts';
import { requestMeta } from './request-meta.ts';
import { route, routes } from './route.ts';

// Paths with a behaviour of their own: never answered with the app, whatever they ask for.
const RESERVED = /^\/(api|s)(\/|$)|^\/(health|metrics)$/;

/** The build of `web/` from source, one per process: every server the process starts (a test file's) serves the same. */
let fromSource: { at: number; bundle: Promise<WebBundle> } | null = null;

/**
 * Where the app comes from: the bundle `npm run build` embedded in the executable, else (`npm start`,
 * tests) a build of `web/` made on first use and remade when a source file changes.
 */
class WebBundleSource {
  private readonly embeddedFile: Blob | undefined;
  // Read at the first page or asset asked for: a server used only through its API and WebDAV never holds it.
  private embedded: Promise<WebBundle<Blob>> | null = null;

  constructor(private readonly log: AppContext['log']) {
    this.embeddedFile = embeddedFile(BUNDLE_FILE_PREFIX)?.file;
  }

  /** `recheck`: look for an edited source first. Only the page does: its assets are the ones the page it came with names. */
  get(recheck: boolean): Promise<WebBundle<Uint8Array | Blob>> {
    if (this.embeddedFile) {
      this.embedded ??= decodeWebBundle(this.embeddedFile);
      return this.embedded;
    }
    const changed = fromSource && !recheck ? fromSource.at : newestSourceChange();
    if (!fromSource || changed > fromSource.at) {
      const bundle = buildWebBundle({ minify: true });
      bundle.catch((err: Error) => this.log.error('web app build failed', { err: err.message }));
      fromSource = { at: changed, bundle };
    }
    return fromSource.bundle;
  }
}

function serve(asset: WebAsset<Uint8Array | Blob>, request: Request): Response {
  const accepts = request.headers.get('accept-encoding') ?? '';
  const [body, encoding] = /\bbr\b/.test(accepts) ? [asset.br, 'br'] : /\bgzip\b/.test(accepts) ? [asset.gzip, 'gzip'] : [asset.body, null];
  const headers: Record<string, string> = {
    'Content-Type': asset.type,
    'Cache-Control': asset.immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
    Vary: 'Accept-Encoding',
  };
  if (encoding) headers['Content-Encoding'] = encoding;
  // The app's own form posts (ZIP downloads) must carry its Origin for the CSRF check; other sites see no referrer.
  if (!asset.immutable) headers['Referrer-Policy'] = 'same-origin';
  return new Response(body, { headers });
}

/**
 * The web app: hashed assets under `/assets/`, and the app's page for every other path a browser
 * navigates to (`/files/<id>`, `/trash`, `/login`...). API, share links, health and metrics keep their
 * own answers; anything not asking for HTML gets the usual JSON 404.
 */
export function webAppRoutes(ctx: AppContext) {
  const source = new WebBundleSource(ctx.log);
  return routes([
    route('GET /assets/:name', {
      handler: async ({ params, request }) => {
        const asset = (await source.get(false)).assets.get(`/assets/${params.name}`);
        if (!asset) throw new NotFoundError();
        return serve(asset, request);
      },
    }),
    route('GET /*', {
      handler: async ({ request }) => {
        const pathname = requestMeta(request).path;
        if (RESERVED.test(pathname) || !(request.headers.get('accept') ?? '').includes('text/html')) throw new NotFoundError();
        return serve((await source.get(true)).index, request);
      },
    }),
  ]);
}
