import { Elysia } from 'elysia';
import type { AppContext } from '../context.ts';

const startedAt = performance.now();

/** Liveness only: answers without touching the database. */
export function healthRoutes(ctx: AppContext) {
  return new Elysia({ name: 'http/health', seed: ctx.instanceId }).get('/health', () => ({
    status: 'ok',
    timestamp: new Date().toISOString(),
    uptime: (performance.now() - startedAt) / 1000,
  }));
}
