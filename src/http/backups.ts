import { Elysia } from 'elysia';
import type { AppContext } from '../context.ts';
import { sessionPlugin } from './guard.ts';

/** Admin → Backups: the scheduled backups' state, and "Back up now" (a job; 409 while one runs). */
export function backupRoutes(ctx: AppContext) {
  const { scheduledBackups } = ctx.services;
  return new Elysia({ name: 'http/backups', seed: ctx.instanceId })
    .use(sessionPlugin(ctx))
    .get('/api/user/backups', () => scheduledBackups.status(), { session: true })
    .post(
      '/api/user/backups/run',
      ({ set }) => {
        set.status = 202;
        return scheduledBackups.requestNow();
      },
      { session: true },
    );
}
