import { expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Glob } from 'bun';
// The contract declares the API shapes; services answer in them (they import src/contract), and
// http/route.ts checks every route's answer against the route map, so the compiler holds both sides.

const WEB = join(import.meta.dir, '../../web');
const webFiles = () => [...new Glob('**/*.{ts,tsx}').scanSync(WEB)].map((f) => ({ file: f, text: readFileSync(join(WEB, f), 'utf8') }));

test('API paths are written in the clients of web/api/ only', () => {
  const literal = webFiles()
    .filter(({ file, text }) => !file.startsWith('api/') && /['`]\/api\//.test(text))
    .map(({ file }) => file);
  expect(literal).toEqual([]);
});
