import { isIP } from 'node:net';

/** A parsed IP address as a 128-bit big integer (IPv4 mapped into ::ffff:0:0/96). */
function toBigInt(ip: string): bigint | null {
  const version = isIP(ip);
  if (version === 4) return 0xffff00000000n + ipv4ToBigInt(ip);
  if (version !== 6) return null;
  let text = ip.toLowerCase();
  const zone = text.indexOf('%');
  if (zone >= 0) text = text.slice(0, zone);
  let tail = 0n;
  let tailGroups = 0;
  const lastColon = text.lastIndexOf(':');
  const last = text.slice(lastColon + 1);
  if (last.includes('.')) {
    tail = ipv4ToBigInt(last);
    tailGroups = 2;
    text = text.slice(0, lastColon + 1) + '0';
  }
  const [head, rest] = text.split('::') as [string, string | undefined];
  const headParts = head ? head.split(':') : [];
  const restParts = rest !== undefined && rest !== '' ? rest.split(':') : [];
  if (tailGroups) restParts.length ? restParts.pop() : headParts.pop();
  const missing = 8 - tailGroups - headParts.length - restParts.length;
  const groups = [...headParts, ...Array(rest !== undefined ? missing : 0).fill('0'), ...restParts];
  let value = 0n;
  for (const g of groups) value = (value << 16n) + BigInt(parseInt(g, 16));
  return (value << BigInt(tailGroups * 16)) + tail;
}

function ipv4ToBigInt(ip: string): bigint {
  return ip.split('.').reduce((acc, part) => (acc << 8n) + BigInt(Number(part)), 0n);
}

/** Normalises "::ffff:127.0.0.1" to "127.0.0.1" so logs and comparisons see one form. */
export function normalizeIp(ip: string): string {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  return m ? m[1]! : ip;
}

/**
 * The client a per-address limit counts: an IPv4 address as it is, an IPv6 one by its /64 (`2001:db8:1:2::/64`),
 * the block one home, phone or server is given; counted per address, one such client would have 2^64 allowances.
 */
export function limitAddress(ip: string): string {
  // Asked at every request: an IPv4 address (no colon) is answered without parsing.
  if (!ip.includes(':') || isIP(ip) !== 6) return ip;
  const value = toBigInt(ip)!;
  // An IPv4-mapped address is the IPv4 client.
  if (value >> 32n === 0xffffn) return [24n, 16n, 8n, 0n].map((b) => (value >> b) & 255n).join('.');
  const prefix = value >> 64n;
  return `${[48n, 32n, 16n, 0n].map((b) => ((prefix >> b) & 0xffffn).toString(16)).join(':')}::/64`;
}

export function isIpAddress(text: string): boolean {
  return isIP(text) !== 0;
}

/** The URL this machine reaches a server bound to `host` at: a wildcard address is localhost, an IPv6 one goes in brackets. */
export function localUrl(host: string, port: number, secure: boolean): string {
  const name = host === '0.0.0.0' || host === '::' ? 'localhost' : host;
  return `${secure ? 'https' : 'http'}://${name.includes(':') ? `[${name}]` : name}:${port}`;
}

export function isCidr(text: string): boolean {
  const [addr, bits, extra] = text.split('/');
  if (extra !== undefined || !addr || bits === undefined || !/^\d{1,3}$/.test(bits)) return false;
  const version = isIP(addr);
  const n = Number(bits);
  return (version === 4 && n <= 32) || (version === 6 && n <= 128);
}

export function isHostname(text: string): boolean {
  if (text.length === 0 || text.length > 253) return false;
  return text
    .replace(/\.$/, '')
    .split('.')
    .every((label) => /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/i.test(label));
}

interface Range {
  base: bigint;
  mask: bigint;
}

const ALL = (1n << 128n) - 1n;

function toRange(entry: string): Range | null {
  const [addr, bitsText] = entry.split('/');
  const base = toBigInt(addr ?? '');
  if (base === null) return null;
  let bits = 128;
  if (bitsText !== undefined) bits = Number(bitsText) + (isIP(addr!) === 4 ? 96 : 0);
  const mask = bits === 0 ? 0n : (ALL << BigInt(128 - bits)) & ALL;
  return { base: base & mask, mask };
}

/** Matches addresses against IPs and CIDR ranges; IPv4 and IPv4-mapped IPv6 are the same address. */
export class IpMatcher {
  private readonly ranges: Range[];
  constructor(entries: readonly string[]) {
    this.ranges = entries.map(toRange).filter((r): r is Range => r !== null);
  }
  get size(): number {
    return this.ranges.length;
  }
  matches(ip: string): boolean {
    const value = toBigInt(ip);
    if (value === null) return false;
    return this.ranges.some((r) => (value & r.mask) === r.base);
  }
}

const LOOPBACK = new IpMatcher(['127.0.0.0/8', '::1']);

/** 127.0.0.0/8, ::1 (IPv4-mapped included) or the name localhost. */
export function isLoopback(address: string): boolean {
  return address.toLowerCase() === 'localhost' || LOOPBACK.matches(address);
}

// Addresses no document server should be reached at: "this host", link-local (cloud metadata services
// such as 169.254.169.254 and fd00:ec2::254 live there), multicast and broadcast.
const NEVER_FETCHED = new IpMatcher([
  '0.0.0.0/8',
  '169.254.0.0/16',
  '224.0.0.0/4',
  '255.255.255.255/32',
  '::/128',
  'fe80::/10',
  'ff00::/8',
  'fd00:ec2::254/128',
]);

/** Whether an address is one an outgoing request must never go to, whoever names it. */
export function isNeverFetchedAddress(ip: string): boolean {
  return NEVER_FETCHED.matches(ip);
}
