import fs from 'node:fs';
import path from 'node:path';
import type { BunPlugin } from 'bun';
import { readStaticTokens, resolveStaticTokens } from './static-tokens.ts';

/** One file of the built web app, with its precompressed forms: bytes as built, or slices of the embedded bundle. */
export interface WebAsset<Bytes extends Uint8Array | Blob = Uint8Array> {
  /** URL path: `/assets/<name>-<hash>.<ext>`, or `/index.html` for the page every app path returns. */
  path: string;
  type: string;
  /** Hashed names never change content: cached for a year; the page is revalidated on each load. */
  immutable: boolean;
  body: Bytes;
  br: Bytes;
  gzip: Bytes;
}

export interface WebBundle<Bytes extends Uint8Array | Blob = Uint8Array> {
  index: WebAsset<Bytes>;
  assets: Map<string, WebAsset<Bytes>>;
}

const WEB_SOURCE_DIR = path.resolve(import.meta.dir, '../../web');
const ENTRY = path.join(WEB_SOURCE_DIR, 'app/main.tsx');
const TOKENS = path.join(WEB_SOURCE_DIR, 'ui/tokens.css');
/** The file `npm run build` writes and embeds into the executable (found again by its name's prefix). */
export const BUNDLE_FILE_PREFIX = 'web-app';

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.html': 'text/html; charset=utf-8',
  '.woff2': 'font/woff2',
  '.png': 'image/png',
};

const ICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#2f6fde"/><path fill="#fff" d="M9 11a2 2 0 0 1 2-2h4l2 2h4a2 2 0 0 1 2 2v8a2 2 0 0 1-2 2H11a2 2 0 0 1-2-2z"/></svg>`;

function asset(urlPath: string, body: Uint8Array, immutable: boolean): WebAsset {
  // Only a build compresses: the server reads what the build stored, and never loads node:zlib for it.
  const { brotliCompressSync, constants, gzipSync } = process.getBuiltinModule('node:zlib');
  return {
    path: urlPath,
    type: TYPES[path.extname(urlPath)] ?? 'application/octet-stream',
    immutable,
    body,
    br: brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: body.byteLength } }),
    gzip: gzipSync(body, { level: 9 }),
  };
}

const hashName = (name: string, body: Uint8Array) => {
  const ext = path.extname(name);
  return `${name.slice(0, -ext.length)}-${new Bun.CryptoHasher('sha256').update(body).digest('hex').slice(0, 10)}${ext}`;
};

function indexHtml(scripts: string[], styles: string[], icon: string): string {
  // No inline script or style: the CSP allows only files from this origin.
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1, viewport-fit=cover">
<meta name="referrer" content="same-origin">
<meta name="color-scheme" content="light dark">
<title>Coffer</title>
<link rel="icon" href="${icon}" type="image/svg+xml">
${styles.map((s) => `<link rel="stylesheet" href="${s}">`).join('\n')}
${scripts.map((s) => `<script type="module" src="${s}"></script>`).join('\n')}
</head>
<body>
<noscript>Coffer needs JavaScript to show your files.</noscript>
<div id="app"></div>
</body>
</html>
`;
}

/** Writes the static tokens of `web/ui/tokens.css` in place into every stylesheet the bundler loads. */
function staticTokens(): BunPlugin {
  return {
    name: 'static-tokens',
    setup(build) {
      const tokens = readStaticTokens(fs.readFileSync(TOKENS, 'utf8'));
      build.onLoad({ filter: /\.css$/ }, async (args) => ({
        contents: resolveStaticTokens(await Bun.file(args.path).text(), tokens),
        loader: 'css',
      }));
    },
  };
}

/** Bundles `web/` with Bun's bundler into hashed, precompressed assets and the page that loads them. */
export async function buildWebBundle(opts: { minify?: boolean } = {}): Promise<WebBundle> {
  const result = await Bun.build({
    entrypoints: [ENTRY],
    target: 'browser',
    minify: opts.minify ?? true,
    // Code loaded on demand (the resumable upload client) stays out of the first load.
    splitting: true,
    naming: { entry: '[name]-[hash].[ext]', chunk: '[name]-[hash].[ext]', asset: '[name]-[hash].[ext]' },
    publicPath: '/assets/',
    define: { 'process.env.NODE_ENV': '"production"' },
    plugins: [staticTokens()],
    throw: false,
  });
  if (!result.success) throw new Error(`web app build failed:\n${result.logs.map(String).join('\n')}`);
  const assets = new Map<string, WebAsset>();
  const scripts: string[] = [];
  const styles: string[] = [];
  for (const out of result.outputs) {
    const urlPath = `/assets/${path.basename(out.path)}`;
    const body = new Uint8Array(await out.arrayBuffer());
    assets.set(urlPath, asset(urlPath, body, true));
    if (out.kind === 'entry-point' && urlPath.endsWith('.js')) scripts.push(urlPath);
    else if (urlPath.endsWith('.css')) styles.push(urlPath);
  }
  const iconBody = new TextEncoder().encode(ICON);
  const iconPath = `/assets/${hashName('icon.svg', iconBody)}`;
  assets.set(iconPath, asset(iconPath, iconBody, true));
  const index = asset('/index.html', new TextEncoder().encode(indexHtml(scripts, styles, iconPath)), false);
  return { index, assets };
}

/** Newest modification time under `web/`, so a server run from source rebuilds after an edit. */
export function newestSourceChange(dir = WEB_SOURCE_DIR): number {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSourceChange(full) : fs.statSync(full).mtimeMs);
  }
  return newest;
}

interface Entry {
  path: string;
  type: string;
  immutable: boolean;
  sizes: [number, number, number];
}

/** One file: a 4-byte header length, a JSON table of contents, then every body, br and gzip form in order. */
export function encodeWebBundle(bundle: WebBundle): Uint8Array {
  const all = [bundle.index, ...bundle.assets.values()];
  const toc: Entry[] = all.map((a) => ({
    path: a.path,
    type: a.type,
    immutable: a.immutable,
    sizes: [a.body.byteLength, a.br.byteLength, a.gzip.byteLength],
  }));
  const header = new TextEncoder().encode(JSON.stringify(toc));
  const prefix = new Uint8Array(4);
  new DataView(prefix.buffer).setUint32(0, header.byteLength);
  return Buffer.concat([prefix, header, ...all.flatMap((a) => [a.body, a.br, a.gzip])]);
}

/**
 * The embedded bundle's table of contents, each form a slice of `file`: only the table is read into memory, the
 * bodies are answered from the executable's own pages (about 0.9 MiB the heap no longer holds a copy of).
 */
export async function decodeWebBundle(file: Blob): Promise<WebBundle<Blob>> {
  const prefix = await file.slice(0, 4).bytes();
  const length = new DataView(prefix.buffer, prefix.byteOffset).getUint32(0);
  const toc = JSON.parse(await file.slice(4, 4 + length).text()) as Entry[];
  let offset = 4 + length;
  const take = (n: number) => file.slice(offset, (offset += n));
  const assets = new Map<string, WebAsset<Blob>>();
  let index: WebAsset<Blob> | undefined;
  for (const e of toc) {
    const a: WebAsset<Blob> = {
      path: e.path,
      type: e.type,
      immutable: e.immutable,
      body: take(e.sizes[0]),
      br: take(e.sizes[1]),
      gzip: take(e.sizes[2]),
    };
    if (a.path === '/index.html') index = a;
    else assets.set(a.path, a);
  }
  if (!index) throw new Error('web app bundle has no index.html');
  return { index, assets };
}
