// `npm run build`: bundles the web app, then compiles the server with that bundle embedded in dist/coffer.
import fs from 'node:fs';
import path from 'node:path';
import { BUNDLE_FILE_PREFIX, buildWebBundle, encodeWebBundle } from '../src/web/app-bundle.ts';

const ROOT = path.resolve(import.meta.dir, '..');
const DIST = path.join(ROOT, 'dist');
fs.mkdirSync(DIST, { recursive: true });

const bundle = await buildWebBundle({ minify: true });
const bundleFile = path.join(DIST, `${BUNDLE_FILE_PREFIX}.bundle`);
fs.writeFileSync(bundleFile, encodeWebBundle(bundle));

const compile = Bun.spawnSync(
  [
    process.execPath,
    'build',
    '--compile',
    '--minify',
    '--sourcemap',
    '--bytecode',
    '--format=esm',
    'src/main.ts',
    path.relative(ROOT, bundleFile),
    '--outfile',
    'dist/coffer',
  ],
  { cwd: ROOT, stdout: 'inherit', stderr: 'inherit' },
);
if (compile.exitCode !== 0) process.exit(compile.exitCode ?? 1);
