import type { Command } from 'commander';
import { ConfigError, loadConfig } from '../src/config.ts';
import { formatSize } from '../src/contract/size.ts';
import type { MigrationProgress } from '../src/services/maintenance/storage-migration.ts';
import { StorageMigrationService } from '../src/services/maintenance/storage-migration.ts';
import type { StorageDriver } from '../src/storage/driver.ts';
import { createDriver, describeLocation, verifyDriver } from '../src/storage/drivers.ts';
import { action, adminCommand, print, printJson, UsageError, untilInterrupted, withContext } from './common.ts';

interface Flags {
  dataDir?: string;
  json?: boolean;
  to?: string;
  switch?: boolean;
  deleteSource?: boolean;
}

/** One line on stderr, redrawn in place: objects, bytes, rate and time left; silent when stderr is not a terminal. */
function migrationBar(enabled = Boolean(process.stderr.isTTY)) {
  const started = performance.now();
  let last = 0;
  return {
    update(p: MigrationProgress, label = 'copying'): void {
      const now = performance.now();
      if (!enabled || (now - last < 200 && p.objects < p.totalObjects)) return;
      last = now;
      const ratio = p.totalObjects ? p.objects / p.totalObjects : 1;
      const width = 24;
      const rate = p.bytes / Math.max(0.001, (now - started) / 1000);
      const eta = rate > 0 && p.totalBytes > p.bytes ? `ETA ${Math.ceil((p.totalBytes - p.bytes) / rate)} s` : '';
      const bytes = p.totalBytes ? `  ${formatSize(p.bytes)} of ${formatSize(p.totalBytes)}  ${formatSize(rate)}/s  ${eta}` : '';
      process.stderr.write(
        `\r\x1b[2K${label} [${'#'.repeat(Math.round(ratio * width)).padEnd(width, '-')}] ${p.objects.toLocaleString('en-US')}/${p.totalObjects.toLocaleString('en-US')} objects${bytes}`,
      );
    },
    done(): void {
      if (enabled) process.stderr.write('\r\x1b[2K');
    },
  };
}

export function registerStorage(program: Command): void {
  const storage = program.command('storage').description('where file contents are stored: move them between local disk and an S3 bucket');

  adminCommand(
    storage
      .command('migrate')
      .description('copy every stored object to the other storage, verifying each copy; resumable; --switch makes the copy the one in use')
      .requiredOption('--to <driver>', "s3 (the S3_* settings name the bucket) or local (the data directory's blobs/)")
      .option('--switch', 'pause uploads and copies, copy what arrived meanwhile and record the new storage (the server may keep running)')
      .option('--delete-source', 'after a switch: delete the old objects that were copied (never before a switch)'),
  )
    .addHelpText(
      'after',
      `
Run it with the settings of the storage in use (COFFER_STORAGE and, for S3, the S3_* variables); the
S3_* variables also name the target of --to s3. The server may keep running while objects are copied.

  coffer storage migrate --to s3              copy (run again after an interruption: it resumes)
  coffer storage migrate --to s3 --switch     copy the rest with writes paused, then record S3 as in use;
                                              set COFFER_STORAGE=s3 and restart the server
  coffer storage migrate --to s3 --delete-source   later: remove the copied objects from local disk

Objects are copied byte for byte (they stay encrypted); each copy's size, header and last segment are
read back and compared before it counts as done. Stopped by Ctrl-C or SIGTERM, it keeps the copies made so
far, lets uploads in again if --switch had paused them, and exits 1.`,
    )
    .action(
      action((opts: Flags) => {
        const to = opts.to?.toLowerCase();
        if (to !== 's3' && to !== 'local') throw new UsageError(`--to must be s3 or local, got "${opts.to}"`);
        if (opts.switch && opts.deleteSource)
          throw new UsageError('run --switch first and --delete-source separately, once the server uses the new storage');
        return withContext(
          opts,
          async (ctx) => {
            let target: StorageDriver;
            try {
              target = createDriver(loadConfig({ dataDir: opts.dataDir, storage: to }, process.env).storage, ctx.paths.blobs);
            } catch (err) {
              if (err instanceof ConfigError) throw new UsageError(`target storage: ${err.message}`);
              throw err;
            }
            const source = ctx.driver;
            await verifyDriver(source);
            await verifyDriver(target);
            const targetId = StorageMigrationService.targetId(target.location, ctx.paths.blobs);
            const bar = migrationBar(!opts.json && Boolean(process.stderr.isTTY));
            if (opts.deleteSource) {
              const r = await ctx.services.storageMigration.deleteSource(source, target, targetId, (p) => bar.update(p, 'deleting'));
              bar.done();
              if (opts.json) return printJson(r);
              print(
                `deleted ${r.deleted} old object(s) from ${describeLocation(source.location)}${r.missing ? `; ${r.missing} were already gone` : ''}`,
              );
              return;
            }
            const interrupt = untilInterrupted(
              `the copies verified so far are kept${opts.switch ? ' and uploads are accepted again' : ''}; run the same command again to resume`,
            );
            const r = await ctx.services.storageMigration
              .migrate(source, target, targetId, { switch: opts.switch, signal: interrupt.signal, onProgress: (p) => bar.update(p) })
              .finally(() => {
                interrupt.release();
                bar.done();
              });
            if (opts.json) return printJson(r);
            print(
              `copied and verified ${r.copied} object(s) (${formatSize(r.bytes)}) from ${describeLocation(r.from)} to ${describeLocation(r.to)} in ${r.seconds.toFixed(1)} s` +
                (r.alreadyCopied ? `; ${r.alreadyCopied} were copied by an earlier run` : ''),
            );
            if (r.missing.length)
              print(`${r.missing.length} file row(s) have no object to copy (already missing): review with coffer orphans scan`);
            if (r.switched) {
              print(
                `${describeLocation(r.to)} is now the storage in use. Set COFFER_STORAGE=${to} (and the S3_* settings) in coffer.env and restart the server;`,
              );
              print(
                'uploads and copies are refused until then. The old objects stay until: coffer storage migrate --to ' +
                  to +
                  ' --delete-source',
              );
            } else print(`Make it the storage in use with: coffer storage migrate --to ${to} --switch (the server may keep running)`);
          },
          { skipLocationCheck: true },
        );
      }),
    );
}
