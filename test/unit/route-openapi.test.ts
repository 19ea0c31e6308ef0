import { describe, expect, spyOn, test } from 'bun:test';
import { Elysia } from 'elysia';
import { z } from 'zod';
import { route } from '../../src/http/route.ts';

describe('route(): the OpenAPI description of its schemas', () => {
  test('is built when first read, not when the route is declared and registered, and then once', () => {
    const convert = spyOn(z, 'toJSONSchema');
    try {
      const declared = route('POST /api/signup', {
        body: z.object({ email: z.string(), password: z.string(), name: z.string() }),
        handler: () => ({}) as never,
      });
      const app = new Elysia();
      declared.register(app);
      expect(convert).toHaveBeenCalledTimes(0);
      const detail = app.routes[0]!.hooks.detail as { requestBody: { content: Record<string, { schema: { required: string[] } }> } };
      expect(detail.requestBody.content['application/json']!.schema.required).toEqual(['email', 'password', 'name']);
      expect(JSON.parse(JSON.stringify(detail)).requestBody).toEqual(detail.requestBody);
      expect(convert).toHaveBeenCalledTimes(1);
    } finally {
      convert.mockRestore();
    }
  });
});
