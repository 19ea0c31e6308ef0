import type { AppContext } from '../context.ts';
import { eventsQuery } from '../contract/files.ts';
import { route, routes } from './route.ts';
import { RateLimitedError } from '../errors.ts';
import type { Replay, SseStreams } from '../events/sse.ts';

const STREAM_HEADERS = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-cache',
  'X-Accel-Buffering': 'no',
  Connection: 'keep-alive',
};

/** GET /api/files/events: the account's file events as Server-Sent Events (docs/compatibility.md › Events), resumed after `Last-Event-ID`. */
export function eventRoutes(ctx: AppContext, streams: SseStreams) {
  return routes([
    route('GET /api/files/events', {
      query: eventsQuery,
      handler: ({ principal, request, server, query }) => {
        // The headers alone: a stream opened for a HEAD was never answered and held one of the login's streams while the connection lasted.
        if (request.method === 'HEAD') return new Response(null, { headers: STREAM_HEADERS });
        const lastEventId = request.headers.get('last-event-id') ?? query.lastEventId ?? null;
        const changes = ctx.services.changeEvents;
        const replay: Replay = {
          start: () => changes.resumeFrom(lastEventId || null),
          page: (afterSeq, untilSeq, limit) => changes.replay(principal, afterSeq, untilSeq, limit),
        };
        const stream = streams.open(
          principal.accountId,
          principal.loginId,
          request.signal,
          () => ctx.services.sessions.isSignedIn(principal.loginId, principal.sessionId),
          replay,
          principal.sessionId,
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
        return new Response(stream, { headers: STREAM_HEADERS });
      },
    }),
  ]);
}
