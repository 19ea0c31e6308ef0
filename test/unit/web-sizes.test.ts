import { afterAll, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import {
  isArrowFunction,
  isFunctionDeclaration,
  isFunctionExpression,
  isIdentifier,
  isVariableDeclaration,
  type Node,
  type SourceFile,
} from 'typescript/unstable/ast';
import { API } from 'typescript/unstable/async';

/** The web app's size limits (issue 47): a screen is a composition of parts, none of them hundreds of lines. */
const MAX_COMPONENT_LINES = 200;
const MAX_TSX_LINES = 400;

const REPO = path.resolve(import.meta.dir, '../..');

interface Component {
  file: string;
  name: string;
  lines: number;
}

function tsxFiles(dir: string): string[] {
  return fs.readdirSync(path.join(REPO, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) return tsxFiles(rel);
    return e.name.endsWith('.tsx') ? [rel] : [];
  });
}

/** Functions named as components (a capital first letter), declared or bound to a name, at any depth. */
function componentsOf(file: string, sf: SourceFile): Component[] {
  const out: Component[] = [];
  const lineOf = (pos: number) => sf.getLineAndCharacterOfPosition(pos).line;
  const add = (name: string, node: Node) => {
    if (/^[A-Z]/.test(name)) out.push({ file, name, lines: lineOf(node.getEnd()) - lineOf(node.getStart(sf)) + 1 });
  };
  const visit = (node: Node): void => {
    if (isFunctionDeclaration(node) && node.name) add(node.name.text, node);
    else if (
      isVariableDeclaration(node) &&
      isIdentifier(node.name) &&
      node.initializer &&
      (isArrowFunction(node.initializer) || isFunctionExpression(node.initializer))
    )
      add(node.name.text, node.initializer);
    node.forEachChild(visit);
  };
  sf.forEachChild(visit);
  return out;
}

/** Every `.tsx` file of `web/` parsed by the TypeScript compiler: its line count and its components. */
async function measure(): Promise<{ files: { file: string; lines: number }[]; components: Component[] }> {
  const api = new API({ cwd: REPO });
  try {
    const snapshot = await api.updateSnapshot({ openProjects: [path.join(REPO, 'web/tsconfig.json')] });
    const program = snapshot.getProjects()[0]!.program;
    const files: { file: string; lines: number }[] = [];
    const components: Component[] = [];
    for (const file of tsxFiles('web')) {
      const sf = await program.getSourceFile(path.join(REPO, file));
      if (!sf) throw new Error(`${file} is not part of web/tsconfig.json`);
      files.push({ file, lines: sf.getLineStarts().length - (sf.text.endsWith('\n') ? 1 : 0) });
      components.push(...componentsOf(file, sf));
    }
    return { files, components };
  } finally {
    await api.close();
  }
}

const found = await measure();
const byLines = <T extends { lines: number }>(list: T[]) => [...list].sort((a, b) => b.lines - a.lines);

afterAll(() => {
  const components = byLines(found.components);
  const largest = components[0];
  console.log(
    `web app: largest component ${largest?.name} ${largest?.lines} lines; components over 80 lines: ${components.filter((c) => c.lines > 80).length}, over ${MAX_COMPONENT_LINES}: ${components.filter((c) => c.lines > MAX_COMPONENT_LINES).length}; .tsx files over ${MAX_TSX_LINES} lines: ${found.files.filter((f) => f.lines > MAX_TSX_LINES).length}`,
  );
});

describe('web app sizes', () => {
  test('finds the components it measures', () => {
    expect(found.components.map((c) => c.name)).toContain('FileBrowser');
    expect(found.files.length).toBeGreaterThan(50);
  });

  test(`no component function over ${MAX_COMPONENT_LINES} lines`, () => {
    const over = byLines(found.components.filter((c) => c.lines > MAX_COMPONENT_LINES)).map((c) => `${c.name} (${c.file}) ${c.lines}`);
    expect(over).toEqual([]);
  });

  test(`no .tsx file over ${MAX_TSX_LINES} lines`, () => {
    const over = byLines(found.files.filter((f) => f.lines > MAX_TSX_LINES)).map((f) => `${f.file} ${f.lines}`);
    expect(over).toEqual([]);
  });
});
