import type { AppContext } from '../context.ts';
import { route, routes } from './route.ts';

/** Admin → Backups: the scheduled backups' state, and "Back up now" (a job; 409 while one waits or runs). */
export function backupRoutes(ctx: AppContext) {
  const { scheduledBackups, replication } = ctx.services;
  return routes([
    route('GET /api/user/backups', {
      summary: 'The schedule, the last and next backup run, the latest failure, and the replica',
      handler: () => ({ ...scheduledBackups.status(), replication: replication?.status() ?? null }),
    }),
    route('POST /api/user/backups/run', {
      summary: 'Back up now',
      handler: ({ set }) => {
        set.status = 202;
        return scheduledBackups.requestNow();
      },
    }),
  ]);
}
