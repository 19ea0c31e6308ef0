import { Elysia } from 'elysia';
import type { AppContext } from '../context.ts';
import type { Limits } from './limits.ts';
import { authPlugin } from './plugins/auth.ts';

export function versionRoutes(ctx: AppContext, limits: Limits) {
  return new Elysia({ name: 'http/version', seed: ctx.instanceId })
    .use(authPlugin(ctx, limits))
    .get('/api/version', () => ctx.services.version.current(), { auth: true })
    .get('/api/version/latest', () => ctx.services.version.latest(), { auth: true });
}
