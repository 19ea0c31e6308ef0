import type { Command } from 'commander';
import { action, adminCommand, AttentionNeeded, intOption, print, printJson, progressBar, withContext } from './common.ts';

interface Flags {
  dataDir?: string;
  json?: boolean;
  batchSize?: string;
  maxBatches?: string;
}

export function registerKeys(program: Command): void {
  const keys = program.command('keys').description('the master encryption key');

  adminCommand(keys.command('status').description('the current master key and how many files each key wraps')).action(
    action((opts: Flags) =>
      withContext(opts, (ctx) => {
        const status = ctx.services.keys.status();
        if (opts.json) return printJson(status);
        print(`current master key: ${status.currentKeyId}`);
        print(`keys in secrets.json: ${status.keyIds.join(', ')}`);
        for (const [id, n] of Object.entries(status.items)) print(`  ${id}: ${n} file(s)${id === status.currentKeyId ? ' (current)' : ''}`);
        if (status.pendingRotation)
          print(`an interrupted rotation to ${status.pendingRotation.toKeyId} is pending: run coffer keys rotate`);
      }),
    ),
  );

  adminCommand(
    keys
      .command('rotate')
      .description("make a new master key current and re-wrap every file's data key and every MFA secret under it; no blob is rewritten")
      .option('--batch-size <n>', 'rows re-wrapped per transaction (default 1000)')
      .option('--max-batches <n>', 'stop after this many batches; run again to continue')
      .addHelpText(
        'after',
        `
The new key is written to secrets.json first; the old one stays there under previousMasterKeys, since
backups made before the rotation still need it. An interrupted rotation (Ctrl-C, a crash, --max-batches)
is resumed by running the command again. A running server picks up the new key by itself. Back up
secrets.json after rotating.`,
      ),
  ).action(
    action((opts: Flags) =>
      withContext(opts, async (ctx) => {
        const batchSize = intOption('--batch-size', opts.batchSize, 1, 100_000);
        const maxBatches = intOption('--max-batches', opts.maxBatches, 1, Number.MAX_SAFE_INTEGER);
        const bar = progressBar();
        const result = await ctx.services.keys.rotate({
          batchSize,
          maxBatches,
          onProgress: (p) => bar.update(p.phase === 'items' ? 'files  ' : 'secrets', p.done, p.total),
        });
        bar.done();
        if (opts.json) printJson(result);
        else {
          print(`${result.resumed ? 'resumed rotation to' : 'new master key'} ${result.keyId}`);
          print(`re-wrapped ${result.itemsRewrapped} file key(s) and ${result.secretsRewrapped} MFA secret(s)`);
          if (result.unreadable.count)
            print(`${result.unreadable.count} value(s) could not be opened with any key in secrets.json and were left as they are`);
          print(
            result.completed
              ? 'rotation complete; back up secrets.json now'
              : `${result.remaining} value(s) still under older keys: run coffer keys rotate again`,
          );
        }
        if (!result.completed) throw new AttentionNeeded('');
      }),
    ),
  );
}
