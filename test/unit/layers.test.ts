import { describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';

/** Source files by path from the repository root (`src/…`, `cli/…`, `web/…`) and their text. */
type Tree = Map<string, string>;

const REPO = path.resolve(import.meta.dir, '../..');

function readTree(): Tree {
  const tree: Tree = new Map();
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(path.join(REPO, dir), { withFileTypes: true })) {
      const rel = `${dir}/${e.name}`;
      if (e.isDirectory()) walk(rel);
      else if (/\.tsx?$/.test(e.name) && !e.name.endsWith('.d.ts')) tree.set(rel, fs.readFileSync(path.join(REPO, rel), 'utf8'));
    }
  };
  for (const dir of ['src', 'cli', 'web']) walk(dir);
  return tree;
}

interface Import {
  from: string;
  /** The module: a path from the repository root for relative imports, else the specifier as written (`bun:sqlite`). */
  target: string;
  typeOnly: boolean;
  /** `export … from`: the names pass through this module to its importers. */
  reexport: boolean;
  names: string[];
}

function importsOf(from: string, text: string): Import[] {
  const out: Import[] = [];
  for (const m of text.matchAll(/^(import|export)\s+(type\s+)?([^'";]*?\s+from\s+)?'([^']+)'/gm)) {
    const spec = m[4]!;
    const target = spec.startsWith('.') ? path.posix.normalize(path.posix.join(path.posix.dirname(from), spec)) : spec;
    const list = /\{([^}]*)\}/.exec(m[3] ?? '')?.[1] ?? '';
    const names = list
      .split(',')
      .map((n) => n.trim().replace(/^type\s+/, ''))
      .filter(Boolean)
      .map((n) => n.split(/\s+as\s+/)[0]!);
    const allTypes = list.trim() !== '' && list.split(',').every((n) => n.trim() === '' || n.trim().startsWith('type '));
    out.push({ from, target, typeOnly: Boolean(m[2]) || allTypes, reexport: m[1] === 'export', names });
  }
  return out;
}

/** Where a file sits. Infrastructure is split into its parts, so the "never" pairs can name them. */
function partOf(file: string): string {
  if (file.startsWith('web/')) return 'web app';
  if (file.startsWith('cli/')) return 'cli';
  const f = file.slice('src/'.length);
  if (['context.ts', 'composition.ts', 'listener.ts', 'app.ts', 'server.ts', 'main.ts'].includes(f)) return 'root';
  if (f.startsWith('contract/')) return 'contract';
  if (f.startsWith('http/') || f.startsWith('web/') || f.startsWith('job-handlers/')) return 'entry';
  if (f.startsWith('services/')) return 'services';
  if (f.startsWith('db/')) return 'db';
  if (f.startsWith('storage/')) return 'storage';
  if (f.startsWith('jobs/')) return 'jobs';
  if (f.startsWith('events/')) return 'events';
  if (f === 'data-dir.ts') return 'data directory';
  return 'lib';
}

/** Top to bottom: imports point down or within a part, never up (cli and the root wire everything). */
const RANK: Record<string, number> = {
  cli: 6,
  root: 5,
  entry: 4,
  services: 3,
  db: 2,
  storage: 2,
  jobs: 2,
  events: 2,
  'data directory': 2,
  contract: 1,
  lib: 1,
};

/** Pairs that rank alone would allow, and that must never be: each part reaches the other through what sits above both. */
const NEVER: Array<[from: string, to: string]> = [
  ['storage', 'db'],
  ['storage', 'data directory'],
  ['storage', 'jobs'],
  ['storage', 'events'],
  ['db', 'storage'],
  ['db', 'jobs'],
  ['db', 'events'],
  ['db', 'data directory'],
  ['events', 'db'],
  ['events', 'storage'],
  ['events', 'jobs'],
  ['jobs', 'storage'],
  ['jobs', 'events'],
  ['jobs', 'data directory'],
  ['data directory', 'db'],
  ['data directory', 'storage'],
  ['entry', 'db'],
  ['cli', 'db'],
  ['cli', 'data directory'],
];

const relativeImports = (tree: Tree) =>
  [...tree]
    .flatMap(([file, text]) => importsOf(file, text))
    .filter((i) => i.target.startsWith('src/') || i.target.startsWith('web/') || i.target.startsWith('cli/'));

const show = (i: Import) => `${i.from} → ${i.target}${i.typeOnly ? ' (type)' : ''}`;

/** Each rule takes a tree and returns what breaks it, one line each. */
const RULES: Record<string, (tree: Tree) => string[]> = {
  'imports point down a layer; the composition root is imported for types only (cli excepted)': (tree) =>
    relativeImports(tree)
      .filter((i) => i.from.startsWith('src/') && i.target.startsWith('src/'))
      .filter((i) => {
        const from = partOf(i.from);
        const to = partOf(i.target);
        if (from === 'root') return false;
        if (to === 'root') return !i.typeOnly;
        return RANK[to]! > RANK[from]!;
      })
      .map(show),

  'never pairs: storage ↛ db, storage ↛ data directory, db ↛ storage, routes ↛ db, cli ↛ db, … (types too)': (tree) =>
    relativeImports(tree)
      .filter((i) => NEVER.some(([from, to]) => partOf(i.from) === from && partOf(i.target) === to))
      .map((i) => `${partOf(i.from)} ↛ ${partOf(i.target)}: ${show(i)}`),

  'the web app imports nothing of src/ but src/contract': (tree) =>
    relativeImports(tree)
      .filter((i) => i.from.startsWith('web/') && i.target.startsWith('src/') && !i.target.startsWith('src/contract/'))
      .map(show),

  'src/contract is pure: it imports only itself': (tree) =>
    [...tree]
      .filter(([file]) => file.startsWith('src/contract/'))
      .flatMap(([file, text]) => importsOf(file, text))
      .filter((i) => !(i.target.startsWith('src/contract/') || i.target === 'zod'))
      .map(show),

  'no module outside src/db re-exports a database row': (tree) => {
    const out: string[] = [];
    for (const [file, text] of tree) {
      if (file.startsWith('src/db/')) continue;
      const imports = importsOf(file, text);
      for (const i of imports) if (i.reexport && i.target.startsWith('src/db/')) out.push(`${show(i)} re-exports ${i.names.join(', ')}`);
      const fromDb = new Set(imports.filter((i) => !i.reexport && i.target.startsWith('src/db/')).flatMap((i) => i.names));
      for (const m of text.matchAll(
        /^export\s+(?:type\s+(\w+)(?:<[^>]*>)?\s*=\s*(\w+)\s*;|interface\s+(\w+)\s+extends\s+(\w+)|(?:type\s+)?\{([^}]*)\}\s*;)/gm,
      )) {
        const aliased = m[2] ?? m[4];
        const names = m[5]
          ? m[5].split(',').map(
              (n) =>
                n
                  .trim()
                  .replace(/^type\s+/, '')
                  .split(/\s+as\s+/)[0]!,
            )
          : aliased
            ? [aliased]
            : [];
        for (const n of names) if (fromDb.has(n)) out.push(`${file} re-exports the row ${n}`);
      }
    }
    return out;
  },

  'no route or web module names a type that carries key material': (tree) => {
    const keysOf = keyMaterialOf(tree);
    return [...tree]
      .filter(([file]) => DOORS.some((door) => file.startsWith(door)))
      .flatMap(([file, text]) =>
        [...bindingsOf(file, text).local]
          .filter(([, binding]) => 'from' in binding)
          .map(([name]) => [name, [...keysOf(file, name)]] as const)
          .filter(([, keys]) => keys.length > 0)
          .map(([name, keys]) => `${file} names ${name}, which carries ${keys.join(', ')}`),
      );
  },

  'no route or web module reads key material, whatever type it came in': (tree) =>
    [...tree]
      .filter(([file]) => DOORS.some((door) => file.startsWith(door)))
      .flatMap(([file, text]) => [...new Set([...text.matchAll(KEY_MATERIAL)].map((m) => m[1]!))].map((field) => `${file} reads ${field}`)),

  'no two domains (service folders) import each other back and forth, counting type-only imports': (tree) => {
    const domainOf = (file: string) => /^src\/services\/([^/]+)\//.exec(file)?.[1];
    const edges = new Map<string, string>();
    for (const i of relativeImports(tree)) {
      const [from, to] = [domainOf(i.from), domainOf(i.target)];
      if (from && to && from !== to && !edges.has(`${from} → ${to}`)) edges.set(`${from} → ${to}`, show(i));
    }
    return [...edges]
      .filter(([edge]) => {
        const [from, to] = edge.split(' → ');
        return from! < to! && edges.has(`${to} → ${from}`);
      })
      .map(([edge, first]) => {
        const [from, to] = edge.split(' → ');
        return `${from} ↔ ${to}: ${first} and ${edges.get(`${to} → ${from}`)}`;
      });
  },

  'bun:sqlite, new Database and $client only in src/db': (tree) =>
    [...tree]
      .filter(([file]) => !file.startsWith('src/db/'))
      .filter(([, text]) => /from\s+'bun:sqlite'|\bnew\s+Database\s*\(|\$client\b/.test(text))
      .map(([file]) => file),

  'SQL lives in src/db only (any case)': (tree) => {
    const sql =
      /\b(SELECT\s+(DISTINCT\s+)?[\w*".]+(\s*,\s*[\w*".]+)*\s+FROM\s+\w|INSERT\s+(OR\s+\w+\s+)?INTO\s+\w+\s*\(|UPDATE\s+\w+\s+SET\s+\w+\s*=|DELETE\s+FROM\s+\w+\s+WHERE|PRAGMA\s+\w+\s*=|VACUUM\s+INTO)/i;
    return [...tree].filter(([file, text]) => !file.startsWith('src/db/') && sql.test(text)).map(([file]) => file);
  },

  'no import circle in src/, cli/ or web/, counting type-only imports': (tree) => {
    const graph = new Map<string, string[]>();
    for (const [file, text] of tree)
      graph.set(
        file,
        importsOf(file, text)
          .map((i) => i.target)
          .filter((t) => tree.has(t)),
      );
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
    return cycles;
  },
};

/** What answers requests or runs in the browser: key material must not reach it, under any name. */
const DOORS = ['src/http/', 'src/web/', 'web/'];

const KEY_MATERIAL = /\b(wrappedKey|storageKey|passwordHash|mfaSecret|secretHash|tokenHash|keyHash|codeHash)\b/g;

/** `text` cut at `separator` where it is outside <>, (), [] and {}. */
function splitTopLevel(text: string, separator: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if ('<([{'.includes(c)) depth++;
    else if ('>)]}'.includes(c)) depth--;
    else if (c === separator && depth === 0) {
      parts.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  parts.push(text.slice(start).trim());
  return parts;
}

/** Where a name used in a file comes from: declared there (its text), or imported (the module and its name there). */
type Binding = { declared: string } | { from: string; name: string };

/** Each file's type bindings: declarations (`type`, `interface`), imports and `export { a as b }` (from a module or not). */
function bindingsOf(file: string, text: string): { local: Map<string, Binding>; exported: Map<string, Binding> } {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const local = new Map<string, Binding>();
  const exported = new Map<string, Binding>();
  const pairs = (list: string) =>
    list
      .split(',')
      .map((n) => n.trim().replace(/^type\s+/, ''))
      .filter(Boolean)
      .map((n) => {
        const [name = '', alias] = n.split(/\s+as\s+/);
        return [name, alias ?? name] as const;
      });
  const resolve = (spec: string) => (spec.startsWith('.') ? path.posix.normalize(path.posix.join(path.posix.dirname(file), spec)) : spec);
  for (const m of code.matchAll(/^import\s+(?:type\s+)?(?:\w+\s*,\s*)?\{([^}]*)\}\s*from\s*'([^']+)'/gm))
    for (const [name, alias] of pairs(m[1]!)) local.set(alias, { from: resolve(m[2]!), name });
  for (const m of code.matchAll(/^export\s+(?:type\s+)?\{([^}]*)\}\s*(?:from\s*'([^']+)')?/gm))
    for (const [name, alias] of pairs(m[1]!))
      exported.set(alias, m[2] ? { from: resolve(m[2]), name } : (local.get(name) ?? { declared: name }));
  for (const m of code.matchAll(/^(export\s+)?type\s+(\w+)(?:<[^>]*>)?\s*=\s*([^;]+);/gm)) {
    local.set(m[2]!, { declared: m[3]! });
    if (m[1]) exported.set(m[2]!, { declared: m[3]! });
  }
  for (const m of code.matchAll(/^(export\s+)?interface\s+(\w+)(?:<[^>]*>)?\s*(?:extends\s+([^{]+))?\{/gm)) {
    let depth = 0;
    let end = m.index! + m[0].length - 1;
    for (; end < code.length; end++) {
      if (code[end] === '{') depth++;
      else if (code[end] === '}' && --depth === 0) break;
    }
    const body = `${(m[3] ?? '').split(',').join(' & ')} & ${code.slice(m.index! + m[0].length - 1, end + 1)}`;
    local.set(m[2]!, { declared: body });
    if (m[1]) exported.set(m[2]!, { declared: body });
  }
  // A declared name that is exported by a later `export { X }` is already in `local`; re-read it so it points at the declaration.
  for (const [alias, binding] of exported)
    if ('declared' in binding && local.has(binding.declared)) exported.set(alias, local.get(binding.declared)!);
  return { local, exported };
}

/**
 * Which key material (wrapped keys, object keys, hashes of secrets) a type carries, for any type in src/:
 * rows of tables holding it, followed through aliases declared anywhere (`type LinkRow = typeof
 * shareLinks.$inferSelect` in a service as in src/db), imports and re-exports under any name (`export
 * type { LinkRow as PublicLink }`), Pick, Omit, wrappers such as Partial, intersections, interfaces
 * extending a row and fields typed by one, so a row is caught however it is spelled or passed on.
 */
function keyMaterialOf(tree: Tree): (file: string, name: string) => Set<string> {
  const tableKeys = new Map<string, Set<string>>();
  for (const [file, text] of tree) {
    if (!file.startsWith('src/db/schema/')) continue;
    for (const chunk of text.split(/^(?=export const )/m)) {
      const table = /^export const (\w+) = sqliteTable\(/.exec(chunk)?.[1];
      if (table) tableKeys.set(table, new Set([...chunk.matchAll(KEY_MATERIAL)].map((m) => m[1]!)));
    }
  }
  const bindings = new Map([...tree].map(([file, text]) => [file, bindingsOf(file, text)]));
  const known = new Map<string, Set<string>>();

  const keysOf = (file: string, type: string): Set<string> => {
    const out = new Set<string>();
    for (const term of splitTopLevel(type.trim(), '&')) {
      const generic = /^(\w+)<([\s\S]*)>$/.exec(term);
      const table = /^typeof\s+(\w+)\.\$inferSelect$/.exec(term)?.[1];
      let keys: Set<string>;
      if (generic && (generic[1] === 'Pick' || generic[1] === 'Omit')) {
        const [base = '', ...rest] = splitTopLevel(generic[2]!, ',');
        const named = new Set([...rest.join(',').matchAll(/'(\w+)'/g)].map((m) => m[1]!));
        keys = new Set([...keysOf(file, base)].filter((k) => named.has(k) === (generic[1] === 'Pick')));
      } else if (generic) keys = keysOf(file, generic[2]!);
      else if (table) keys = tableKeys.get(table) ?? new Set();
      else if (/^\w+$/.test(term)) keys = inScope(file, term);
      else {
        // An object type: its own key fields, and those of every type its fields name.
        keys = new Set([...term.matchAll(KEY_MATERIAL)].map((m) => m[1]!));
        for (const m of term.matchAll(/:\s*([A-Z]\w*)/g)) for (const k of inScope(file, m[1]!)) keys.add(k);
      }
      for (const k of keys) out.add(k);
    }
    return out;
  };
  const follow = (file: string, binding: Binding | undefined): Set<string> => {
    if (!binding) return new Set();
    if ('declared' in binding) return keysOf(file, binding.declared);
    return exportedBy(binding.from.endsWith('.ts') || binding.from.endsWith('.tsx') ? binding.from : `${binding.from}.ts`, binding.name);
  };
  const memo = (key: string, compute: () => Set<string>) => {
    let keys = known.get(key);
    if (!keys) {
      known.set(key, new Set());
      keys = compute();
      known.set(key, keys);
    }
    return keys;
  };
  const inScope = (file: string, name: string): Set<string> =>
    memo(`${file}#${name}`, () => follow(file, bindings.get(file)?.local.get(name)));
  const exportedBy = (file: string, name: string): Set<string> =>
    memo(`${file}>${name}`, () => follow(file, bindings.get(file)?.exported.get(name) ?? bindings.get(file)?.local.get(name)));
  return inScope;
}

describe('layers: src/, cli/ and web/', () => {
  const tree = readTree();

  for (const [name, rule] of Object.entries(RULES)) test(name, () => expect(rule(tree)).toEqual([]));

  /** Planted violations, each in every form a rule must see: each must be caught on its own, or the rule misses that form. */
  const PLANTED: Record<string, Array<Record<string, string>>> = {
    'imports point down a layer; the composition root is imported for types only (cli excepted)': [
      { 'src/lib/planted.ts': "import { ItemsService } from '../services/files/items.ts';\n" },
    ],
    'never pairs: storage ↛ db, storage ↛ data directory, db ↛ storage, routes ↛ db, cli ↛ db, … (types too)': [
      { 'src/storage/planted.ts': "import type { Db } from '../db/client.ts';\n" },
    ],
    'the web app imports nothing of src/ but src/contract': [{ 'web/planted.ts': "import { Messages } from '../src/errors.ts';\n" }],
    'src/contract is pure: it imports only itself': [{ 'src/contract/planted.ts': "import { log } from '../log.ts';\n" }],
    'no module outside src/db re-exports a database row': [
      { 'src/services/planted.ts': "import type { Item } from '../db/repos/items.ts';\nexport type StoredItem = Item;\n" },
      { 'src/services/planted.ts': "import type { Item } from '../db/repos/items.ts';\nexport type { Item };\n" },
    ],
    'no route or web module names a type that carries key material': [
      { 'src/http/planted.ts': "import type { Item } from '../db/repos/items.ts';\n" },
      {
        'src/db/repos/planted.ts':
          "import { shareLinks } from '../schema/shares.ts';\ntype Row = typeof shareLinks.$inferSelect;\nexport type PlantedLink = Pick<Row, 'id' | 'passwordHash'>;\n",
        'src/http/planted.ts': "import type { PlantedLink } from '../db/repos/planted.ts';\n",
      },
      // The `export type { … }` form, renamed, of a row declared through a local alias in a service.
      {
        'src/services/files/planted.ts':
          "import type { ShareLink } from '../../db/repos/shares.ts';\ntype LinkRow = ShareLink;\nexport type { LinkRow as PlantedLink };\n",
        'src/http/planted.ts': "import type { PlantedLink } from '../services/files/planted.ts';\n",
      },
      {
        'src/services/files/planted.ts':
          "import { shareLinks } from '../../db/schema/shares.ts';\ntype Row = typeof shareLinks.$inferSelect;\nexport interface PlantedLink extends Omit<Row, 'id'> {}\n",
        'src/http/planted.ts': "import type { PlantedLink as Link } from '../services/files/planted.ts';\n",
      },
      // A row passed on as a field, and re-exported from a module in between.
      {
        'src/services/files/planted.ts':
          "import type { AlbumLinkRow } from '../../db/repos/albums.ts';\nexport interface Opened {\n  link: AlbumLinkRow;\n}\n",
        'src/services/files/planted-index.ts': "export type { Opened as PlantedOpen } from './planted.ts';\n",
        'web/planted.ts': "import type { PlantedOpen } from '../src/services/files/planted-index.ts';\n",
      },
    ],
    'no route or web module reads key material, whatever type it came in': [
      { 'src/http/planted.ts': 'export const locked = (link: { hasPassword: boolean }) => (link as any).passwordHash !== null;\n' },
      { 'web/planted.ts': 'export const wrapped = (item: object) => (item as { wrappedKey?: string }).wrappedKey;\n' },
    ],
    'no two domains (service folders) import each other back and forth, counting type-only imports': [
      { 'src/services/identity/planted.ts': "import type { Tree } from '../files/tree.ts';\n" },
    ],
    'bun:sqlite, new Database and $client only in src/db': [{ 'cli/planted.ts': "import { Database } from 'bun:sqlite';\n" }],
    'SQL lives in src/db only (any case)': [{ 'src/services/planted.ts': "const q = 'select id from items where x = ?';\n" }],
    'no import circle in src/, cli/ or web/, counting type-only imports': [
      {
        'src/lib/planted-a.ts': "import type { B } from './planted-b.ts';\n",
        'src/lib/planted-b.ts': "import type { A } from './planted-a.ts';\n",
      },
    ],
  };

  test('every rule catches a planted violation', () => {
    expect(Object.keys(PLANTED).sort()).toEqual(Object.keys(RULES).sort());
    for (const [name, plants] of Object.entries(PLANTED)) {
      for (const files of plants) {
        const planted = new Map([...tree, ...Object.entries(files)]);
        const form = Object.values(files).join('');
        expect({ name, form, caught: RULES[name]!(planted).length > 0 }).toEqual({ name, form, caught: true });
      }
    }
  });
});
