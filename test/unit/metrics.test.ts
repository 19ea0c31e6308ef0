import { describe, expect, spyOn, test } from 'bun:test';
import { Counter, Gauge, Histogram, MetricsRegistry, ObservedCounter } from '../../src/lib/metrics.ts';
import { parseExposition, sample } from '../helpers/prometheus.ts';
import { parseSince } from '../../cli/audit.ts';

describe('metrics registry', () => {
  test('renders counters, gauges and histograms in the exposition format, label values escaped', () => {
    const r = new MetricsRegistry();
    const c = r.register(new Counter('things_total', 'Things.'));
    const g = r.register(new Gauge('level', 'A level.\nSecond line.'));
    const h = r.register(new Histogram('took_seconds', 'Durations.', [0.1, 1]));
    c.inc({ kind: 'a "quoted"\\path\nnext' }, 2);
    c.inc({ kind: 'b' });
    g.set(-3.5);
    for (const v of [0.05, 0.5, 5]) h.observe(v);
    const text = r.render();
    expect(text).toContain('# HELP level A level.\\nSecond line.');
    expect(text).toContain('things_total{kind="a \\"quoted\\"\\\\path\\nnext"} 2');
    expect(text).toContain('took_seconds_bucket{le="0.1"} 1\ntook_seconds_bucket{le="1"} 2\ntook_seconds_bucket{le="+Inf"} 3');
    const families = parseExposition(text);
    expect(sample(families, 'things_total', { kind: 'b' })).toBe(1);
    expect(sample(families, 'level')).toBe(-3.5);
    expect(sample(families, 'took_seconds')).toBe(3);
  });

  test('a counter never incremented still reports 0; names are checked; one name registers once', () => {
    const r = new MetricsRegistry();
    r.register(new Counter('empty_total', 'Nothing yet.'));
    expect(r.render()).toContain('\nempty_total 0\n');
    // With label names, no sample until a label set is counted: never an unlabelled 0 beside labelled series.
    const labelled = r.register(new Counter('labelled_total', 'By kind.', ['kind']));
    expect(r.render()).not.toMatch(/^labelled_total/m);
    labelled.inc({ kind: 'a' }, 0);
    expect(r.render()).toContain('\nlabelled_total{kind="a"} 0\n');
    expect(() => new Counter('bad-name', 'x')).toThrow();
    expect(() => r.register(new Counter('empty_total', 'again'))).toThrow();
  });
});

test('a counter sorts and escapes a label set once, however often it is counted, in whichever key order (docs/performance.md, the twelfth pass)', () => {
  const c = new Counter('queued_total', 'By action and status.', ['action', 'status']);
  const keys = spyOn(Object, 'keys');
  try {
    for (let i = 0; i < 100; i++) c.inc({ action: 'file.upload', status: 'success' });
    c.inc({ status: 'success', action: 'file.upload' }, 5);
    c.inc({ action: 'a"b', status: 'denied' });
    // Once per spelling of a set: 100 + 1 + 1 before.
    expect(keys).toHaveBeenCalledTimes(3);
  } finally {
    keys.mockRestore();
  }
  expect(c.get({ status: 'success', action: 'file.upload' })).toBe(105);
  expect(c.render()).toEqual([
    '# HELP queued_total By action and status.',
    '# TYPE queued_total counter',
    'queued_total{action="file.upload",status="success"} 105',
    'queued_total{action="a\\"b",status="denied"} 1',
  ]);
});

test('an observed counter reads its total at each render, and is left out when there is none', () => {
  const r = new MetricsRegistry();
  let total: number | null = 1.5;
  r.register(new ObservedCounter('cpu_seconds_total', 'CPU.', () => total));
  expect(r.render()).toContain('# TYPE cpu_seconds_total counter\ncpu_seconds_total 1.5\n');
  total = null;
  expect(r.render()).not.toMatch(/^cpu_seconds_total /m);
});

describe('coffer audit list --since', () => {
  test('durations before now, or dates', () => {
    const now = Date.parse('2026-03-10T12:00:00Z');
    expect(parseSince('24h', now)).toBe(now - 24 * 3600_000);
    expect(parseSince('7d', now)).toBe(now - 7 * 86400_000);
    expect(parseSince('30m', now)).toBe(now - 30 * 60_000);
    expect(parseSince('2w', now)).toBe(now - 14 * 86400_000);
    expect(parseSince('2026-01-31', now)).toBe(Date.parse('2026-01-31'));
    expect(() => parseSince('soon', now)).toThrow(/--since/);
  });
});
