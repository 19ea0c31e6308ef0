import { createHmac, timingSafeEqual } from 'node:crypto';

export interface Received {
  headers: Record<string, string>;
  body: string;
  at: number;
}

/** How the receiver answers a request: a status and body, or never (a hung receiver). */
export type Answer = { status: number; body?: string; headers?: Record<string, string> } | 'hang';

/** A webhook receiver on loopback that records every request and answers as the test says. */
export function startReceiver(answer: (r: Received, n: number) => Answer = () => ({ status: 200, body: 'ok' })) {
  const received: Received[] = [];
  let respond = answer;
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    idleTimeout: 30,
    async fetch(request) {
      const r: Received = { headers: Object.fromEntries(request.headers), body: await request.text(), at: Date.now() };
      received.push(r);
      const a = respond(r, received.length);
      if (a === 'hang') return new Promise<Response>(() => {});
      return new Response(a.body ?? '', { status: a.status, headers: a.headers });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    received,
    answer(next: typeof answer) {
      respond = next;
    },
    stop: () => server.stop(true),
  };
}

/**
 * Verifies a Standard Webhooks signature, written from the specification alone: the signed content is
 * "<webhook-id>.<webhook-timestamp>.<body>", the key the base64 part of the secret after "whsec_",
 * HMAC-SHA256 in base64, and the header a space-separated list of "v1,<signature>".
 */
export function verifyStandardWebhook(secret: string, r: Received, toleranceSeconds = 300): boolean {
  const id = r.headers['webhook-id'];
  const timestamp = r.headers['webhook-timestamp'];
  const header = r.headers['webhook-signature'];
  if (!id || !timestamp || !header) return false;
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > toleranceSeconds) return false;
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${r.body}`).digest();
  return header.split(' ').some((part) => {
    const [version, value] = part.split(',');
    if (version !== 'v1' || !value) return false;
    const given = Buffer.from(value, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
