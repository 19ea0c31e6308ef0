import { afterAll, describe, expect, test } from 'bun:test';
import { standbyListener } from '../../src/http/standby.ts';
import type { StandbyStatus } from '../../src/services/maintenance/standby.ts';

const status: StandbyStatus = {
  destination: '/replica',
  generation: 'g1',
  appliedSegments: 3,
  appliedAt: null,
  lagSeconds: 0,
  lastCheckAt: null,
  problem: null,
};
let promotions = 0;
const listener = standbyListener({
  follower: { status: () => status },
  host: '127.0.0.1',
  port: 0,
  promote: async () => {
    promotions++;
    return status;
  },
});
afterAll(() => listener.stop());

const promote = (headers: Record<string, string> = {}) => fetch(`${listener.url}/api/admin/promote`, { method: 'POST', headers });

describe('a standby’s promotion door', () => {
  test('from loopback, but not a request a reverse proxy on the machine passed on, nor one a browser there sent (any page can post to loopback)', async () => {
    for (const headers of <Record<string, string>[]>[
      { 'x-forwarded-for': '203.0.113.9' },
      { forwarded: 'for=203.0.113.9' },
      { 'x-real-ip': '203.0.113.9' },
      { origin: 'https://pages.example' },
      { 'sec-fetch-site': 'cross-site' },
    ]) {
      const res = await promote(headers);
      expect(res.status, JSON.stringify(headers)).toBe(403);
      expect(((await res.json()) as { error: string }).error).toContain('loopback only');
    }
    expect(promotions).toBe(0);
    // As `coffer promote` (or curl) on the machine asks.
    const res = await promote();
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ promoted: true, generation: 'g1' });
    expect(promotions).toBe(1);
  });
});
