import type { AppContext } from '../context.ts';
import { route, routes } from './route.ts';
import { RateLimitedError } from '../errors.ts';
import type { SseStreams } from '../events/sse.ts';

/** GET /api/files/events: the account's file events as Server-Sent Events (docs/compatibility.md › Events). */
export function eventRoutes(ctx: AppContext, streams: SseStreams) {
  return routes(ctx, 'http/events', [
    route('GET /api/files/events', {
      handler: ({ principal, request, server }) => {
        const stream = streams.open(principal.accountId, principal.loginId, request.signal, () =>
          ctx.services.sessions.isSignedIn(principal.loginId, principal.sessionId),
        );
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
    }),
  ]);
}
