import { describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';

const SRC = path.resolve(import.meta.dir, '../../src');
const CLI = path.resolve(import.meta.dir, '../../cli');

/**
 * The layers, top to bottom: imports point down (or within a layer), never up. The composition root
 * (context, composition, listener, app, server, main) wires everything; others may import it for types only.
 */
const LAYERS: Array<[layer: string, rank: number, test: (file: string) => boolean]> = [
  ['root', 99, (f) => ['context.ts', 'composition.ts', 'listener.ts', 'app.ts', 'server.ts', 'main.ts'].includes(f)],
  ['entry', 4, (f) => f.startsWith('http/') || f.startsWith('web/') || f.startsWith('jobs/handlers/')],
  ['services', 3, (f) => f.startsWith('services/')],
  ['infrastructure', 2, (f) => ['db/', 'storage/', 'jobs/', 'events/'].some((d) => f.startsWith(d)) || f === 'data-dir.ts'],
  ['lib', 1, () => true],
];

const layerOf = (file: string) => LAYERS.find(([, , match]) => match(file))!;

function sources(dir = SRC): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    return e.isDirectory() ? sources(full) : e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [full] : [];
  });
}

/** Relative imports of a file: the target (relative to src/) and whether only types are imported. */
function importsOf(file: string): Array<{ target: string; typeOnly: boolean }> {
  const text = fs.readFileSync(file, 'utf8');
  const out: Array<{ target: string; typeOnly: boolean }> = [];
  for (const m of text.matchAll(/^(?:import|export)\s+(type\s+)?(?:[^'";]*?\s+from\s+)?'(\.[^']+)'/gm)) {
    const target = path.relative(SRC, path.resolve(path.dirname(file), m[2]!));
    const names = /\{([^}]*)\}/.exec(m[0])?.[1] ?? '';
    const allTypes = names.trim() !== '' && names.split(',').every((n) => n.trim() === '' || n.trim().startsWith('type '));
    out.push({ target, typeOnly: Boolean(m[1]) || allTypes });
  }
  return out;
}

describe('dependency direction (http → services → repos/storage/jobs/events → lib)', () => {
  const files = sources().map((f) => path.relative(SRC, f));
  const edges = files.flatMap((from) => importsOf(path.join(SRC, from)).map((i) => ({ from, ...i })));

  test('no import points up a layer, except type-only imports of the composition root', () => {
    const upward = edges
      .filter((e) => e.target.startsWith('..') === false && fs.existsSync(path.join(SRC, e.target)))
      .filter((e) => {
        const [, from] = layerOf(e.from);
        const [toLayer, to] = layerOf(e.target);
        if (from === 99) return false;
        if (toLayer === 'root') return !e.typeOnly;
        // Routes and handlers reach the tables through services only.
        if (from === 4 && e.target.startsWith('db/')) return true;
        return to > from;
      })
      .map((e) => `${e.from} → ${e.target}${e.typeOnly ? ' (type)' : ''}`);
    expect(upward).toEqual([]);
  });

  test('no import circle in src/ or cli/, counting type-only imports too', () => {
    const repo = path.dirname(SRC);
    const graph = new Map<string, string[]>();
    for (const file of [...sources(), ...sources(CLI)]) {
      const targets = importsOf(file).map((i) => path.relative(repo, path.join(SRC, i.target)));
      graph.set(
        path.relative(repo, file),
        targets.filter((t) => fs.existsSync(path.join(repo, t))),
      );
    }
    const cycles: string[] = [];
    const state = new Map<string, 'visiting' | 'done'>();
    const visit = (node: string, trail: string[]) => {
      if (state.get(node) === 'done') return;
      if (state.get(node) === 'visiting') {
        cycles.push([...trail.slice(trail.indexOf(node)), node].join(' → '));
        return;
      }
      state.set(node, 'visiting');
      for (const next of graph.get(node) ?? []) visit(next, [...trail, node]);
      state.set(node, 'done');
    };
    for (const node of graph.keys()) visit(node, []);
    expect(cycles).toEqual([]);
  });

  test('SQL lives in src/db only', () => {
    const sql = /\b(SELECT\s+[\w*"]|INSERT\s+(OR\s+\w+\s+)?INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|PRAGMA\s+\w|VACUUM\s+INTO)/;
    const leaks = files.filter((f) => !f.startsWith('db/') && sql.test(fs.readFileSync(path.join(SRC, f), 'utf8')));
    expect(leaks).toEqual([]);
  });

  test('the SQLite handle ($client) is reached from src/db only, in src/ and cli/', () => {
    const leaks = [...sources(), ...sources(CLI)]
      .filter((f) => !f.startsWith(path.join(SRC, 'db') + path.sep))
      .filter((f) => fs.readFileSync(f, 'utf8').includes('$client'))
      .map((f) => path.relative(path.dirname(SRC), f));
    expect(leaks).toEqual([]);
  });
});
