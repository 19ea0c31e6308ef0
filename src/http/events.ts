import { Elysia } from 'elysia';
import type { AppContext } from '../context.ts';
import { RateLimitedError } from '../errors.ts';
import type { SseStreams } from '../events/sse.ts';
import { sessionPlugin } from './guard.ts';

/** GET /api/files/events: the account's file events as Server-Sent Events (COMPAT "Events (SSE)"). */
export function eventRoutes(ctx: AppContext, streams: SseStreams) {
  return new Elysia({ name: 'http/events', seed: ctx.instanceId }).use(sessionPlugin(ctx)).get(
    '/api/files/events',
    ({ principal, request, server }) => {
      const stream = streams.open(principal.accountId, principal.loginId, request.signal);
      if (!stream) {
        throw new RateLimitedError({
          'RateLimit-Limit': String(streams.maxPerLogin),
          'RateLimit-Remaining': '0',
          'RateLimit-Reset': String(Math.ceil(ctx.clock.now() / 1000) + 5),
          'Retry-After': '5',
        });
      }
      // A stream is quiet between events: the idle timeout that closes stalled connections must not close it.
      server?.timeout(request, 0);
      return new Response(stream, {
        headers: {
          'Content-Type': 'text/event-stream; charset=utf-8',
          'Cache-Control': 'no-cache',
          'X-Accel-Buffering': 'no',
          Connection: 'keep-alive',
        },
      });
    },
    { session: true },
  );
}
