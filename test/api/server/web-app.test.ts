import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { gunzipSync, brotliDecompressSync } from 'node:zlib';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.stop());

const html = (path: string) => fetch(`${t.url}${path}`, { headers: { accept: 'text/html,application/xhtml+xml' } });

describe('the web app served by the server', () => {
  test('every app path a browser opens gets the app page: no-cache, strict CSP, same-origin referrer, no inline script or style', async () => {
    for (const path of [
      '/',
      '/files',
      '/files/abc123',
      '/recent',
      '/starred',
      '/shared',
      '/trash',
      '/search?q=x',
      '/login',
      '/signup',
      '/settings/profile',
      '/admin/users',
    ]) {
      const res = await html(path);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.headers.get('cache-control')).toBe('no-cache');
      expect(res.headers.get('referrer-policy')).toBe('same-origin');
      const csp = res.headers.get('content-security-policy')!;
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("style-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('unsafe-inline');
      const body = await res.text();
      expect(body).toContain('<div id="app"></div>');
      expect(body).not.toMatch(/<script>|<script(?![^>]*\bsrc=)[^>]*>|<style|style="/);
    }
  });

  test('API, share links, health and metrics keep their own answers; non-HTML requests get the JSON 404', async () => {
    const api = await html('/api/nope');
    expect(api.status).toBe(404);
    expect(await api.json()).toEqual({ message: 'Not found' });
    expect((await html('/s/no-such-token')).status).toBe(404);
    expect((await html('/health')).headers.get('content-type')).toContain('application/json');
    const plain = await fetch(`${t.url}/files`);
    expect(plain.status).toBe(404);
    expect(plain.headers.get('content-type')).toContain('application/json');
  });

  test('assets: hashed names cached for a year, precompressed brotli and gzip, identity for clients without either', async () => {
    const page = await (await html('/')).text();
    const paths = [...page.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1]!);
    expect(paths.some((p) => /\/assets\/main-[a-z0-9]+\.js$/.test(p))).toBe(true);
    expect(paths.some((p) => /\/assets\/main-[a-z0-9]+\.css$/.test(p))).toBe(true);
    for (const path of paths) {
      const plain = await fetch(`${t.url}${path}`, { headers: { 'accept-encoding': 'identity' }, decompress: false });
      expect(plain.status).toBe(200);
      expect(plain.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(plain.headers.get('vary')).toBe('Accept-Encoding');
      expect(plain.headers.get('content-encoding')).toBeNull();
      const raw = Buffer.from(await plain.arrayBuffer());
      const br = await fetch(`${t.url}${path}`, { headers: { 'accept-encoding': 'gzip, br' }, decompress: false });
      expect(br.headers.get('content-encoding')).toBe('br');
      expect(brotliDecompressSync(Buffer.from(await br.arrayBuffer())).equals(raw)).toBe(true);
      const gz = await fetch(`${t.url}${path}`, { headers: { 'accept-encoding': 'gzip' }, decompress: false });
      expect(gz.headers.get('content-encoding')).toBe('gzip');
      expect(gunzipSync(Buffer.from(await gz.arrayBuffer())).equals(raw)).toBe(true);
    }
    expect((await fetch(`${t.url}/assets/main-nothere.js`)).status).toBe(404);
  });
});
