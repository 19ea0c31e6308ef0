import { createHmac, randomBytes } from 'node:crypto';
import type http from 'node:http';
import { DestinationRefused, type Destinations } from './destination.ts';

/** The first bytes of a response kept in the delivery log. */
const RESPONSE_EXCERPT_BYTES = 1024;
const SECRET_PREFIX = 'whsec_';

/** A new signing secret, Standard Webhooks style: `whsec_` and 32 random bytes in base64. */
export function newSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

/** `webhook-signature`'s value: v1 and the base64 HMAC-SHA256 of "id.timestamp.body" keyed by the secret's bytes. */
function sign(secret: string, messageId: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${messageId}.${timestamp}.${body}`).digest('base64')}`;
}

export interface Attempt {
  ok: boolean;
  responseStatus: number | null;
  durationMs: number;
  responseExcerpt: string | null;
  error: string | null;
}

/** Posts signed messages to a hook's URL, connecting only to the address its destination check approved. */
export class WebhookSender {
  constructor(
    private readonly destinations: Destinations,
    private readonly timeoutMs: number,
    private readonly userAgent: string,
  ) {}

  async send(
    url: string,
    message: { id: string; timestamp: number; body: string; secret: string },
    signal?: AbortSignal,
  ): Promise<Attempt> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    let target: Awaited<ReturnType<Destinations['resolve']>>;
    try {
      target = await this.destinations.resolve(url, signal);
    } catch (err) {
      if (!(err instanceof DestinationRefused)) throw err;
      return { ok: false, responseStatus: null, durationMs: elapsed(), responseExcerpt: null, error: err.message };
    }
    const headers = {
      'content-type': 'application/json',
      'user-agent': this.userAgent,
      'webhook-id': message.id,
      'webhook-timestamp': String(message.timestamp),
      'webhook-signature': sign(message.secret, message.id, message.timestamp, message.body),
      'content-length': String(Buffer.byteLength(message.body)),
    };
    // Loaded at the first delivery: node:http and node:https weigh about 1 MiB a server without webhooks never uses.
    const client = target.url.protocol === 'https:' ? await import('node:https') : await import('node:http');
    const result = await this.post(client, target, headers, message.body, signal);
    return { ...result, durationMs: elapsed() };
  }

  private post(
    client: Pick<typeof http, 'request'>,
    target: Awaited<ReturnType<Destinations['resolve']>>,
    headers: Record<string, string>,
    body: string,
    signal?: AbortSignal,
  ): Promise<Omit<Attempt, 'durationMs'>> {
    const { url, address, family } = target;
    return new Promise((resolve) => {
      let settled = false;
      const finish = (r: Omit<Attempt, 'durationMs'>) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        req.destroy();
        resolve(r);
      };
      const fail = (error: string) => finish({ ok: false, responseStatus: null, responseExcerpt: null, error });
      const req = client.request(
        url,
        {
          method: 'POST',
          headers,
          // The address checked above, never a second lookup that could answer differently.
          lookup: (_host: string, opts: { all?: boolean }, cb: (...args: unknown[]) => void) =>
            opts?.all ? cb(null, [{ address, family }]) : cb(null, address, family),
        } as http.RequestOptions,
        (res) => {
          const status = res.statusCode ?? 0;
          const chunks: Buffer[] = [];
          let size = 0;
          const done = () => {
            const excerpt = Buffer.concat(chunks).subarray(0, RESPONSE_EXCERPT_BYTES).toString('utf8');
            const ok = status >= 200 && status < 300;
            const error = ok
              ? null
              : status >= 300 && status < 400
                ? `redirect not followed (${status}${res.headers.location ? ` to ${res.headers.location}` : ''})`
                : `answered ${status}`;
            finish({ ok, responseStatus: status, responseExcerpt: excerpt, error });
          };
          res.on('data', (chunk: Buffer) => {
            if (size < RESPONSE_EXCERPT_BYTES) chunks.push(chunk);
            size += chunk.length;
            if (size >= RESPONSE_EXCERPT_BYTES) done();
          });
          res.on('end', done);
          res.on('error', (err) => fail(err.message));
        },
      );
      const timer = setTimeout(() => fail(`timed out after ${this.timeoutMs / 1000} s`), this.timeoutMs);
      const onAbort = () => fail('the server is stopping');
      signal?.addEventListener('abort', onAbort, { once: true });
      req.on('error', (err) => fail(err.message));
      req.end(body);
    });
  }
}
