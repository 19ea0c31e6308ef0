import { describe, expect, test } from 'bun:test';
import { z } from 'zod';
import { built, lazySchema } from '../../src/contract/lazy-schema.ts';
import { loginBody, signupBody } from '../../src/contract/accounts.ts';
import { registerBody } from '../../src/contract/passkeys.ts';
import { route } from '../../src/http/route.ts';

const eager = () =>
  z.object({ sortBy: z.enum(['name', 'size']).default('name'), limit: z.coerce.number().int('limit must be a whole number').max(500) });

describe('lazySchema()', () => {
  test('builds the schema at its first use, once', () => {
    let builds = 0;
    const schema = lazySchema(() => {
      builds++;
      return eager();
    });
    const declared = route('GET /api/files', { query: schema, handler: () => ({}) as never });
    expect(declared).toBeDefined();
    expect(builds).toBe(0);
    expect(schema.parse({ limit: '20' })).toEqual({ sortBy: 'name', limit: 20 });
    expect(schema.safeParse({ limit: '1.5' }).error?.issues[0]?.message).toBe('limit must be a whole number');
    expect(schema.shape.limit).toBeDefined();
    expect(schema instanceof z.ZodObject).toBe(true);
    expect(builds).toBe(1);
    // A method is bound once, not at every use on the request path.
    expect(schema.safeParse).toBe(schema.safeParse);
  });

  test('gives the same JSON Schema and errors as the schema built at once, placed inside another through built()', () => {
    const field = lazySchema(() => z.string({ error: 'name is required' }).max(5).default('x'));
    const lazy = lazySchema(() => z.object({ name: built(field), inner: lazySchema(eager).optional() }));
    const direct = z.object({ name: z.string({ error: 'name is required' }).max(5).default('x'), inner: eager().optional() });
    const options = { io: 'input', unrepresentable: 'any' } as const;
    expect(z.toJSONSchema(built(lazy), options)).toEqual(z.toJSONSchema(direct, options));
    expect(lazy.safeParse({ name: 7 }).error?.issues).toEqual(direct.safeParse({ name: 7 }).error!.issues);
  });

  test("the contract's schemas convert to JSON Schema and validate as declared", () => {
    for (const schema of [signupBody, loginBody, registerBody]) {
      expect(z.toJSONSchema(built(schema), { io: 'input', unrepresentable: 'any' })).toMatchObject({ type: 'object' });
    }
    expect(loginBody.safeParse({ email: 'x', password: 'p' }).error?.issues[0]?.message).toBe('Enter a valid email address');
  });
});
