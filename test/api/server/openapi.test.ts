import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createApp } from '../../../src/app.ts';
import { ANY_METHOD } from '../../../src/http/openapi.ts';
import { ROUTES } from '../../../src/http/policy.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

let t: TestServer;
let doc: any;
beforeAll(async () => {
  t = await startTestServer({ startWorker: false });
  const res = await fetch(`${t.url}/api/openapi.json`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toContain('application/json');
  doc = await res.json();
});
afterAll(() => t.stop());

const openApiPath = (route: string) => route.replace(/:([^/]+)/g, '{$1}').replace(/\/\*$/, '/{path}');

describe('GET /api/openapi.json', () => {
  test('describes every registered route, with its path parameters, without signing in', () => {
    expect(doc.openapi).toBe('3.1.0');
    const served = createApp(t.server.ctx).routes.map((r) => ({
      method: r.method === 'ALL' ? ANY_METHOD : r.method.toLowerCase(),
      path: r.path,
    }));
    expect(served.length).toBeGreaterThan(80);
    const missing = served.filter((r) => !doc.paths[openApiPath(r.path)]?.[r.method]).map((r) => `${r.method} ${r.path}`);
    expect(missing).toEqual([]);
    const documented = Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops as object).map((m) => `${m} ${p}`));
    expect(documented.length).toBe(served.length);
    for (const [p, ops] of Object.entries<any>(doc.paths)) {
      const names = [...p.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
      for (const op of Object.values<any>(ops)) {
        expect(op.parameters.filter((x: any) => x.in === 'path').map((x: any) => x.name)).toEqual(names);
        expect(op.responses).toBeDefined();
      }
    }
    const ids = documented.map((key) => {
      const [m, p] = key.split(' ');
      return doc.paths[p!][m!].operationId;
    });
    expect(new Set(ids).size).toBe(ids.length);
  });

  test('access and rate limits come from the policy table; inputs from the schemas the handlers validate with', () => {
    const folder = doc.paths['/api/files/folder'].post;
    expect(folder.security).toEqual([{ cookieAuth: [] }, { bearerAuth: [] }]);
    expect(folder['x-coffer-access']).toContain('items.createFolder');
    const body = folder.requestBody.content['application/json'].schema;
    expect(body.required).toEqual(['name']);
    expect(Object.keys(body.properties)).toEqual(['name', 'parentId']);

    const login = doc.paths['/api/login'].post;
    expect(login.security).toBeUndefined();
    expect(login['x-coffer-rate-limit']).toEqual(ROUTES['POST /api/login']!.limit);
    expect(login.requestBody.content['application/json'].schema.required).toEqual(['email', 'password']);

    const list = doc.paths['/api/files'].get;
    expect(list.parameters.map((p: any) => p.name)).toContain('parentId');
    expect(list.parameters.map((p: any) => p.name)).toContain('cursor');

    const upload = doc.paths['/api/files/upload'].post.requestBody.content['multipart/form-data'].schema;
    expect(upload.properties.file.format).toBe('binary');
    expect(doc.paths['/api/user/all'].get['x-coffer-access']).toBe('the admin');
  });
});

describe('GET /api/docs', () => {
  test('renders every operation as a self-contained page (no script, nothing from elsewhere)', async () => {
    const res = await fetch(`${t.url}/api/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    const html = await res.text();
    for (const p of Object.keys(doc.paths)) expect(html).toContain(`<code>${p}</code>`);
    expect(html).not.toContain('<script');
    expect(html).not.toMatch(/(src|href)="https?:/);
  });
});
