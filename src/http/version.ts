import { Elysia } from 'elysia';
import type { AppContext } from '../context.ts';

export function versionRoutes(ctx: AppContext) {
  return new Elysia({ name: 'http/version' }).get('/api/version', () => ctx.services.version.current());
}
