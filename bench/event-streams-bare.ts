// The event-streams bench's reference: a bare Bun server doing only the unavoidable work of an event stream
// (accept, answer with a stream, a first event, one encoded event written to every open stream). argv: port.
const encoder = new TextEncoder();
const streams = new Set<ReadableStreamDefaultController<Uint8Array>>();
const CONNECTED = encoder.encode('data: {"type":"connected"}\n\n');

Bun.serve({
  port: Number(process.argv[2]),
  hostname: '127.0.0.1',
  idleTimeout: 0,
  async fetch(request) {
    const { pathname } = new URL(request.url);
    if (pathname === '/health') return new Response('ok');
    if (pathname === '/api/files/folder' && request.method === 'POST') {
      const { name } = (await request.json()) as { name: string };
      const frame = encoder.encode(`data: ${JSON.stringify({ type: 'folder.created', data: { name } })}\n\n`);
      for (const c of streams) c.enqueue(frame);
      return Response.json({ name });
    }
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        controller = c;
        c.enqueue(CONNECTED);
        streams.add(c);
      },
      cancel() {
        streams.delete(controller);
      },
    });
    return new Response(body, { headers: { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache' } });
  },
});
