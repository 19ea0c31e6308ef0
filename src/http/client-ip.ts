import { IpMatcher, normalizeIp } from '../lib/ip.ts';

/**
 * Resolves the client address: X-Forwarded-For is believed only when the peer is a known proxy,
 * walking right to left past further known proxies.
 */
export class ClientIpResolver {
  // Requests come in runs from one address (a connection's): its normal form is kept, not recomputed.
  private lastPeer: string | null = null;
  private lastRemote = 'unknown';

  constructor(private readonly proxies: IpMatcher) {}

  resolve(peer: string | null, forwardedFor: string | null): string {
    if (peer !== this.lastPeer) {
      this.lastPeer = peer;
      this.lastRemote = normalizeIp(peer ?? 'unknown');
    }
    const remote = this.lastRemote;
    if (!forwardedFor || this.proxies.size === 0 || !this.proxies.matches(remote)) return remote;
    const hops = forwardedFor.split(',').map(hopAddress).filter(Boolean);
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = hops[i]!;
      if (!this.proxies.matches(hop)) return hop;
    }
    return hops[0] ?? remote;
  }

  isTrustedPeer(peer: string | null): boolean {
    return peer !== null && this.proxies.size > 0 && this.proxies.matches(normalizeIp(peer));
  }
}

/**
 * An X-Forwarded-For entry as an address: some proxies (Azure's, IIS ARR) add the client's port, `1.2.3.4:51234` or
 * `[2001:db8::1]:51234`; kept, each connection would be a client of its own, with limits of its own.
 */
function hopAddress(entry: string): string {
  const hop = entry.trim();
  const bracketed = /^\[([0-9a-f:.]+)\](?::\d+)?$/i.exec(hop);
  if (bracketed) return normalizeIp(bracketed[1]!.toLowerCase());
  const v4 = /^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/.exec(hop);
  return normalizeIp(v4 ? v4[1]! : hop.includes(':') ? hop.toLowerCase() : hop);
}
