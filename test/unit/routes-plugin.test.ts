import { describe, expect, spyOn, test } from 'bun:test';
import { Elysia } from 'elysia';
import { route, routes } from '../../src/http/route.ts';

describe('routes(): an area of routes', () => {
  test('is registered on the app that uses it, each route added to one router once', async () => {
    // Elysia's own method every route goes through (not in its public types).
    const add = spyOn(Elysia.prototype as unknown as { add: (...args: unknown[]) => unknown }, 'add');
    try {
      const app = new Elysia();
      const area = routes([
        route('GET /health', { handler: () => ({ status: 'ok' }) as never }),
        route('GET /api/version', { handler: () => ({}) as never }),
      ]);
      expect(app.use(area)).toBe(app);
      expect(app.routes.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /health', 'GET /api/version']);
      // An Elysia instance per area added each route to its own router, then again to the app's.
      expect(add).toHaveBeenCalledTimes(2);
      expect(add.mock.contexts.every((self) => self === app)).toBe(true);
      expect(await (await app.handle(new Request('http://localhost/health'))).json()).toEqual({ status: 'ok' });
    } finally {
      add.mockRestore();
    }
  });
});
