import { route, routes } from './route.ts';

const startedAt = performance.now();

/** Liveness only: answers without touching the database. */
export function healthRoutes() {
  return routes([
    route('GET /health', {
      handler: () => ({ status: 'ok', timestamp: new Date().toISOString(), uptime: (performance.now() - startedAt) / 1000 }),
    }),
  ]);
}
