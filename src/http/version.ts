import { Elysia } from 'elysia';
import type { AppContext } from '../context.ts';
import { sessionPlugin } from './guard.ts';

export function versionRoutes(ctx: AppContext) {
  return new Elysia({ name: 'http/version', seed: ctx.instanceId })
    .use(sessionPlugin(ctx))
    .get('/api/version', () => ctx.services.version.current(), { session: true })
    .get('/api/version/latest', () => ctx.services.version.latest(), { session: true });
}
