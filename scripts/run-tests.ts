import fs from 'node:fs';
import { SKIP_LOG } from '../test/helpers/prerequisites.ts';

/**
 * `npm test`'s last step: `--reset` clears the skip log before the runs; otherwise runs `bun test` with
 * the arguments given (npm test -- FILES) and ends with one line listing every test skipped and why.
 */
if (process.argv[2] === '--reset') {
  fs.rmSync(SKIP_LOG, { force: true });
} else {
  const run = Bun.spawnSync([process.execPath, 'test', '--timeout', '60000', ...process.argv.slice(2)], {
    stdio: ['inherit', 'inherit', 'inherit'],
  });
  const lines = fs.existsSync(SKIP_LOG) ? fs.readFileSync(SKIP_LOG, 'utf8').split('\n').filter(Boolean) : [];
  const skipped = [...new Set(lines)].map((l) => JSON.parse(l) as { test: string; reason: string });
  console.log(
    skipped.length === 0
      ? 'Skipped tests: none.'
      : `Skipped tests (${skipped.length}): ${skipped.map((s) => `${s.test} (${s.reason})`).join('; ')}.`,
  );
  process.exitCode = run.exitCode !== 0 ? (run.exitCode ?? 1) : skipped.length > 0 && process.env.CI === 'true' ? 1 : 0;
}
