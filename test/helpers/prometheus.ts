import { expect } from 'bun:test';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';

export interface MetricFamily {
  name: string;
  help: string;
  type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
  metrics: Array<{ value?: string; labels?: Record<string, string>; buckets?: Record<string, string>; count?: string; sum?: string }>;
}

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const LABEL = `[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\\\\n]|\\\\[\\\\"n])*"`;
const SAMPLE = new RegExp(`^(${NAME})(\\{(?:${LABEL})(?:,${LABEL})*\\})? (-?[0-9.eE+-]+|[+-]Inf|NaN)$`);
const HELP = new RegExp(`^# HELP (${NAME}) .*$`);
const TYPE = new RegExp(`^# TYPE (${NAME}) (counter|gauge|histogram|summary|untyped)$`);

/**
 * Checks text against the Prometheus exposition format (0.0.4) line by line, then parses it with an
 * independent parser. Each family: HELP and TYPE once, before its samples, samples contiguous; a
 * histogram's buckets cumulative and ending in +Inf equal to _count.
 */
export function parseExposition(text: string): Map<string, MetricFamily> {
  expect(text.endsWith('\n')).toBe(true);
  const typed = new Map<string, string>();
  const seen = new Set<string>();
  let current = '';
  for (const line of text.slice(0, -1).split('\n')) {
    const help = HELP.exec(line);
    const type = TYPE.exec(line);
    if (help) {
      expect(seen.has(help[1]!)).toBe(false);
      current = help[1]!;
      continue;
    }
    if (type) {
      expect(type[1]).toBe(current);
      expect(typed.has(current)).toBe(false);
      typed.set(current, type[2]!);
      seen.add(current);
      continue;
    }
    const sample = SAMPLE.exec(line);
    if (!sample) throw new Error(`not a valid exposition line: ${JSON.stringify(line)}`);
    const name = sample[1]!;
    const family = typed.get(current) === 'histogram' ? name.replace(/_(bucket|sum|count)$/, '') : name;
    expect(family).toBe(current);
  }
  const families = new Map<string, MetricFamily>();
  for (const f of parsePrometheusTextFormat(text) as MetricFamily[]) families.set(f.name, f);
  for (const f of families.values()) {
    if (f.type !== 'HISTOGRAM') continue;
    for (const m of f.metrics) {
      const buckets = Object.entries(m.buckets!)
        .map(([le, n]) => [le === '+Inf' ? Infinity : Number(le), Number(n)] as const)
        .sort((a, b) => a[0] - b[0]);
      let previous = 0;
      for (const [le, n] of buckets) {
        expect(Number.isNaN(le) || Number.isNaN(n)).toBe(false);
        expect(n).toBeGreaterThanOrEqual(previous);
        previous = n;
      }
      expect(text).toContain(`${f.name}_bucket{le="+Inf"} ${m.count}`);
    }
  }
  return families;
}

/** The value of a sample, by family and labels. */
export function sample(families: Map<string, MetricFamily>, name: string, labels: Record<string, string> = {}): number | undefined {
  const f = families.get(name);
  const m = f?.metrics.find(
    (x) =>
      Object.entries(labels).every(([k, v]) => x.labels?.[k] === v) && Object.keys(x.labels ?? {}).length === Object.keys(labels).length,
  );
  if (!m) return undefined;
  return Number(m.value ?? m.count);
}
