import dns from 'node:dns/promises';
import net from 'node:net';
import { badRequest } from '../../errors.ts';

/** Why an address may not receive webhooks by default; null when it may. */
export type AddressClass =
  | 'unspecified'
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'shared (CGNAT)'
  | 'multicast'
  | 'broadcast'
  | 'reserved'
  | 'unique local (ULA)';

/** A refusal the delivery log shows as it is: the hook's owner reads it. */
export class DestinationRefused extends Error {}

const v4 = (a: number, b: number, c: number, d: number) => ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;
// [network, prefix length, class]; the first match wins.
const V4_BLOCKS: Array<[number, number, AddressClass]> = [
  [v4(255, 255, 255, 255), 32, 'broadcast'],
  [v4(0, 0, 0, 0), 8, 'unspecified'],
  [v4(10, 0, 0, 0), 8, 'private'],
  [v4(100, 64, 0, 0), 10, 'shared (CGNAT)'],
  [v4(127, 0, 0, 0), 8, 'loopback'],
  [v4(169, 254, 0, 0), 16, 'link-local'],
  [v4(172, 16, 0, 0), 12, 'private'],
  [v4(192, 0, 0, 0), 24, 'reserved'],
  [v4(192, 168, 0, 0), 16, 'private'],
  [v4(198, 18, 0, 0), 15, 'reserved'],
  [v4(224, 0, 0, 0), 4, 'multicast'],
  [v4(240, 0, 0, 0), 4, 'reserved'],
];

function parseV4(text: string): number {
  const [a, b, c, d] = text.split('.').map(Number) as [number, number, number, number];
  return v4(a, b, c, d);
}

function classifyV4(address: number): AddressClass | null {
  for (const [network, bits, kind] of V4_BLOCKS) {
    const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
    if ((address & mask) >>> 0 === network) return kind;
  }
  return null;
}

/** The eight 16-bit groups of an IPv6 address (a trailing dotted quad included). */
function parseV6(text: string): number[] {
  let s = text.toLowerCase().split('%')[0]!;
  const quad = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (quad) {
    const n = parseV4(quad[1]!);
    s = `${s.slice(0, -quad[1]!.length)}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const [head, tail] = s.includes('::') ? (s.split('::') as [string, string]) : [s, null];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const fill = tail === null ? [] : Array(8 - left.length - right.length).fill('0');
  return [...left, ...fill, ...right].map((g) => Number.parseInt(g, 16));
}

function classifyV6(groups: number[]): AddressClass | null {
  const [g0, g1, g2, g3, g4, g5, g6, g7] = groups as [number, number, number, number, number, number, number, number];
  const embedded = ((g6 << 16) | g7) >>> 0;
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0) {
    if (g5 === 0xffff) return classifyV4(embedded);
    if (g5 === 0 && g6 === 0 && g7 === 0) return 'unspecified';
    if (g5 === 0 && g6 === 0 && g7 === 1) return 'loopback';
    // IPv4-compatible (::a.b.c.d), deprecated: judged by the IPv4 address it carries.
    if (g5 === 0) return classifyV4(embedded);
  }
  // NAT64 (64:ff9b::/96) reaches the IPv4 address it carries.
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return classifyV4(embedded);
  if ((g0 & 0xffc0) === 0xfe80) return 'link-local';
  if ((g0 & 0xffc0) === 0xfec0) return 'private';
  if ((g0 & 0xfe00) === 0xfc00) return 'unique local (ULA)';
  if ((g0 & 0xff00) === 0xff00) return 'multicast';
  return null;
}

/** Why `address` (an IP literal) is refused by default, or null when it is a public address. */
export function addressClass(address: string): AddressClass | null {
  const family = net.isIP(address);
  if (family === 4) return classifyV4(parseV4(address));
  if (family === 6) return classifyV6(parseV6(address));
  return 'reserved';
}

export interface ResolvedDestination {
  url: URL;
  /** The hostname without IPv6 brackets. */
  hostname: string;
  /** The address checked, which the request connects to (no second lookup). */
  address: string;
  family: 4 | 6;
}

/** A hook's URL as stored: http or https, a host, no credentials. Bad input is a 400 the caller can act on. */
export function parseHookUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw badRequest('url is not a valid URL: give one such as https://example.com/hooks/coffer');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw badRequest('url must start with http:// or https://');
  if (url.username || url.password) throw badRequest('url may not hold a user name or password: the signature authenticates Coffer');
  if (!url.hostname) throw badRequest('url has no host');
  url.hash = '';
  return url;
}

const bare = (hostname: string) => hostname.replace(/^\[|\]$/g, '').toLowerCase();

/**
 * Where a delivery may go: the URL's host resolved, every address it resolves to checked (a host that
 * also resolves to a private address is refused), unless WEBHOOK_ALLOWED_HOSTS names the host.
 */
export class Destinations {
  private readonly allowed: ReadonlySet<string>;

  constructor(
    allowedHosts: readonly string[],
    /** How long a lookup may take (WEBHOOK_TIMEOUT_MS): a resolver that never answers must not hold a delivery's slot. */
    private readonly timeoutMs: number,
    private readonly lookup: (hostname: string) => Promise<Array<{ address: string; family: number }>> = (h) =>
      dns.lookup(h, { all: true, verbatim: true }),
  ) {
    this.allowed = new Set(allowedHosts.map(bare));
  }

  isAllowedHost(hostname: string): boolean {
    return this.allowed.has(bare(hostname));
  }

  /** Refuses at creation a URL whose host is itself a refused address (names are checked at each delivery). */
  checkLiteral(url: URL): void {
    const host = bare(url.hostname);
    if (net.isIP(host) === 0 || this.isAllowedHost(host)) return;
    const kind = addressClass(host);
    if (kind) throw badRequest(refusal(host, kind));
  }

  async resolve(text: string, signal?: AbortSignal): Promise<ResolvedDestination> {
    const url = new URL(text);
    const hostname = bare(url.hostname);
    const literal = net.isIP(hostname);
    const addresses = literal ? [{ address: hostname, family: literal }] : await this.lookupWithin(hostname, signal);
    if (addresses.length === 0) throw new DestinationRefused(`${hostname} resolves to no address`);
    if (!this.isAllowedHost(hostname)) {
      for (const { address } of addresses) {
        const kind = addressClass(address);
        if (kind) throw new DestinationRefused(refusal(address, kind, literal ? undefined : hostname));
      }
    }
    const first = addresses[0]!;
    return { url, hostname, address: first.address, family: first.family === 6 ? 6 : 4 };
  }

  /** The host's addresses, or DestinationRefused when the resolver fails, says nothing within the time limit, or the server stops. */
  private async lookupWithin(hostname: string, signal?: AbortSignal): Promise<Array<{ address: string; family: number }>> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let onAbort: (() => void) | undefined;
    const given = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new DestinationRefused(`could not resolve ${hostname}: no answer from DNS within ${this.timeoutMs / 1000} s`)),
        this.timeoutMs,
      );
      onAbort = () => reject(new DestinationRefused('the server is stopping'));
      if (signal?.aborted) onAbort();
      else signal?.addEventListener('abort', onAbort, { once: true });
    });
    try {
      return await Promise.race([this.lookup(hostname), given]);
    } catch (err) {
      if (err instanceof DestinationRefused) throw err;
      throw new DestinationRefused(`could not resolve ${hostname}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
    } finally {
      clearTimeout(timer);
      if (onAbort) signal?.removeEventListener('abort', onAbort);
    }
  }
}

function refusal(address: string, kind: AddressClass, hostname?: string): string {
  const who = hostname ? `${hostname} resolves to ${address}` : address;
  return `refused: ${who}, ${/^[aeiou]/.test(kind) ? 'an' : 'a'} ${kind} address; the admin can allow a named host with WEBHOOK_ALLOWED_HOSTS`;
}
