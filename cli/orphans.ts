import fs from 'node:fs';
import type { Command } from 'commander';
import { formatSize } from '../src/contract/size.ts';
import type { OrphanDeletion, OrphanReport } from '../src/contract/admin.ts';
import { DELETE_LIMIT, GRACE_MINUTES } from '../src/contract/limits.ts';
import {
  action,
  adminCommand,
  AttentionNeeded,
  confirm,
  intOption,
  print,
  printJson,
  progressBar,
  table,
  UsageError,
  withContext,
} from './common.ts';

interface Flags {
  dataDir?: string;
  json?: boolean;
  graceMinutes?: string;
}

const graceOf = (opts: Flags) =>
  intOption('--grace-minutes', opts.graceMinutes, GRACE_MINUTES.min, GRACE_MINUTES.max) ?? GRACE_MINUTES.default;

function printReport(r: OrphanReport): void {
  print(`Orphan scan of ${r.driver} storage at ${r.scannedAt}, grace window ${r.graceMinutes} minutes`);
  print(
    `  stored objects: ${r.totals.storedObjects}, file rows: ${r.totals.databaseRows}, held back as too recent: ${r.totals.skippedTooRecent}`,
  );
  const s = r.storageOrphans;
  print();
  print(`Stored objects no file row points at: ${s.count} (${formatSize(s.totalBytes)})`);
  if (s.items.length)
    print(
      table(
        ['KEY', 'SIZE', 'LAST MODIFIED'],
        s.items.map((o) => [o.key, formatSize(o.size), o.lastModified]),
      ),
    );
  if (s.truncated) print(`  … and ${s.count - s.items.length} more (the report lists ${s.items.length})`);
  if (r.incompleteUploadsUnlisted) {
    print(`  Incomplete multipart uploads could not be listed on this store, so none are in this report (${r.incompleteUploadsUnlisted}).`);
  }
  const d = r.databaseOrphans;
  print();
  print(`File rows whose stored object is missing: ${d.count} (${formatSize(d.totalBytes)})`);
  if (d.items.length) {
    print(
      table(
        ['ID', 'PATH', 'OWNER', 'SIZE', 'CREATED', 'TRASHED'],
        d.items.map((o) => [o.id, o.path, o.ownerEmail ?? '?', formatSize(o.size), o.createdAt, o.trashed ? 'yes' : 'no']),
      ),
    );
  }
  if (d.truncated) print(`  … and ${d.count - d.items.length} more (the report lists ${d.items.length})`);
  if (s.count || d.count) {
    print();
    print('Nothing was deleted. Review, then: coffer orphans delete --from-report <file saved with --json>');
  }
}

function selectionFromReport(file: string): { storageKeys: string[]; fileIds: string[] } {
  let report: Partial<OrphanReport>;
  try {
    report = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<OrphanReport>;
  } catch (err) {
    throw new UsageError(`cannot read the report ${file}: ${(err as Error).message}`);
  }
  if (!Array.isArray(report.storageOrphans?.items) || !Array.isArray(report.databaseOrphans?.items)) {
    throw new UsageError(`${file} is not an orphan scan report (save one with: coffer orphans scan --json > ${file})`);
  }
  return {
    storageKeys: report.storageOrphans.items.map((o) => String(o.key)),
    fileIds: report.databaseOrphans.items.map((o) => String(o.id)),
  };
}

export function registerOrphans(program: Command): void {
  const orphans = program
    .command('orphans')
    .description('find stored objects without a file row and file rows without a stored object; delete them after review');

  adminCommand(
    orphans
      .command('scan')
      .description('read-only scan; prints the same report as GET /api/user/orphans (nothing is deleted)')
      .option(
        '--grace-minutes <n>',
        `hold back entries younger than this (${GRACE_MINUTES.min}-${GRACE_MINUTES.max}, default ${GRACE_MINUTES.default})`,
      ),
  ).action(
    action((opts: Flags) =>
      withContext(opts, async (ctx) => {
        const graceMinutes = graceOf(opts);
        const bar = progressBar();
        const report = await ctx.services.orphans.scan({
          graceMinutes,
          by: 'cli',
          onProgress: (p) => bar.update(p.phase === 'storage' ? 'objects' : 'rows   ', p.done, p.total),
        });
        bar.done();
        if (opts.json) printJson(report);
        else printReport(report);
      }),
    ),
  );

  adminCommand(
    orphans
      .command('delete')
      .description('delete reviewed orphans; each entry is re-verified first and skipped, with its reason, if it no longer qualifies')
      .option('--storage-key <key...>', 'stored objects to delete')
      .option('--file-id <id...>', 'file rows to delete')
      .option('--from-report <file>', 'every entry listed in a report saved with `coffer orphans scan --json`')
      .option(
        '--grace-minutes <n>',
        `skip entries younger than this (${GRACE_MINUTES.min}-${GRACE_MINUTES.max}, default ${GRACE_MINUTES.default})`,
      )
      .option('-y, --yes', 'do not ask for confirmation (required when stdin is not a terminal)'),
  ).action(
    action((opts: Flags & { storageKey?: string[]; fileId?: string[]; fromReport?: string; yes?: boolean }) =>
      withContext(opts, async (ctx) => {
        const graceMinutes = graceOf(opts);
        const fromReport = opts.fromReport ? selectionFromReport(opts.fromReport) : { storageKeys: [], fileIds: [] };
        const storageKeys = [...new Set([...(opts.storageKey ?? []), ...fromReport.storageKeys])];
        const fileIds = [...new Set([...(opts.fileId ?? []), ...fromReport.fileIds])];
        if (storageKeys.length === 0 && fileIds.length === 0)
          throw new UsageError('Select at least one orphan to delete: --storage-key, --file-id or --from-report');
        if (ctx.services.backup.objectDeletionsHeld()) {
          throw new UsageError('a full backup is reading objects now: run this again once it has finished');
        }
        await confirm(`Delete ${storageKeys.length} stored object(s) and ${fileIds.length} file row(s)?`, opts.yes);
        const total: OrphanDeletion = {
          graceMinutes,
          storage: { results: [], deleted: 0, skipped: 0 },
          database: { results: [], deleted: 0, skipped: 0 },
        };
        // The API takes 500 of each per request; the CLI sends a long selection in such chunks.
        for (let i = 0; i < Math.max(storageKeys.length, fileIds.length); i += DELETE_LIMIT) {
          const r = await ctx.services.orphans.deleteOrphans(
            { storageKeys: storageKeys.slice(i, i + DELETE_LIMIT), fileIds: fileIds.slice(i, i + DELETE_LIMIT), graceMinutes },
            'cli',
          );
          for (const side of ['storage', 'database'] as const) {
            (total[side].results as unknown[]).push(...r[side].results);
            total[side].deleted += r[side].deleted;
            total[side].skipped += r[side].skipped;
          }
        }
        if (opts.json) printJson(total);
        else {
          for (const r of total.storage.results) print(`object ${r.key}: ${r.deleted ? 'deleted' : `skipped (${r.reason})`}`);
          for (const r of total.database.results) print(`row ${r.id}: ${r.deleted ? 'deleted' : `skipped (${r.reason})`}`);
          print(
            `deleted ${total.storage.deleted} object(s) and ${total.database.deleted} row(s); skipped ${total.storage.skipped + total.database.skipped}`,
          );
        }
        if (total.storage.skipped + total.database.skipped > 0) throw new AttentionNeeded('');
      }),
    ),
  );
}
