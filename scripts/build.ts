// `npm run build`: bundles the web app, then compiles the server with that bundle embedded in dist/coffer.
import fs from 'node:fs';
import path from 'node:path';
import { BUNDLE_FILE_PREFIX, buildWebBundle, encodeWebBundle } from '../src/web/app-bundle.ts';
import { sourceCommit } from '../src/services/version.ts';

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
    // What `coffer --version` reports; SOURCE_DATE_EPOCH (reproducible builds) fixes the date.
    '--define',
    `COFFER_BUILD_COMMIT=${JSON.stringify(sourceCommit() ?? 'unknown')}`,
    '--define',
    `COFFER_BUILD_DATE=${JSON.stringify(new Date(process.env.SOURCE_DATE_EPOCH ? Number(process.env.SOURCE_DATE_EPOCH) * 1000 : Date.now()).toISOString().replace(/\.\d+Z$/, 'Z'))}`,
    'src/main.ts',
    path.relative(ROOT, bundleFile),
    '--outfile',
    'dist/coffer',
  ],
  { cwd: ROOT, stdout: 'inherit', stderr: 'inherit' },
);
if (compile.exitCode !== 0) process.exit(compile.exitCode ?? 1);
