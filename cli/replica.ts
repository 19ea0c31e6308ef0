import fs from 'node:fs';
import os from 'node:os';
import type { Command } from 'commander';
import { type Config, parseReplicaDestination, secretText, withConfigFile } from '../src/config.ts';
import { formatSize } from '../src/contract/size.ts';
import type { ReplicaListing } from '../src/services/maintenance/replica-restore.ts';
import { replicaStore, type ReplicaStore } from '../src/services/maintenance/replica-store.ts';
import type { PassphraseSource } from '../src/services/maintenance/restore.ts';
import { action, adminCommand, configFrom, print, printJson, readSecret, table, UsageError } from './common.ts';

/** DEST as REPLICATE_TO takes it: a directory, or s3://bucket/prefix with the BACKUP_S3_*, then S3_*, settings. */
export function storeAt(dest: string): ReplicaStore {
  const destination = parseReplicaDestination(dest, withConfigFile(process.env), process.cwd());
  // A mistyped directory would otherwise read as a replica with no generations yet.
  if (destination.kind === 'dir' && !fs.existsSync(destination.dir))
    throw new UsageError(
      `no replica at ${destination.dir}: that directory does not exist (check DEST; REPLICATE_TO makes it when it first ships)`,
    );
  return replicaStore(destination, os.tmpdir());
}

/** BACKUP_PASSPHRASE_FILE's passphrase, else asked on the terminal (or the first line of stdin). */
export function replicaPassphrase(config: Config): PassphraseSource {
  const file = config.backup.passphraseFile;
  return async () => (file ? secretText({ source: 'file', path: file }, 'BACKUP_PASSPHRASE_FILE') : await readSecret('Replica passphrase'));
}

/** `at` as the restore command takes it: an ISO 8601 time (or `YYYY-MM-DD HH:MM:SS`, local), or Unix seconds. */
export function parseMoment(text: string): number {
  const t = text.trim();
  const ms = /^\d+$/.test(t) ? Number(t) * 1000 : Date.parse(t.replace(' ', 'T'));
  if (!Number.isFinite(ms)) throw new UsageError(`--at must be a time such as 2026-11-29T17:59:00Z or Unix seconds, got "${text}"`);
  // To the second: everything shipped within the second named counts.
  return Math.floor(ms / 1000) * 1000 + 999;
}

function printListing(l: ReplicaListing): void {
  print(`replica at ${l.destination}`);
  if (l.generations.length === 0) return print('no generations');
  print(
    table(
      ['GENERATION', 'STARTED', 'LAST CHANGE', 'SEGMENTS', 'SIZE', 'STATE'],
      l.generations.map((g) => [
        g.generation,
        g.startedAt,
        g.lastAt,
        g.segments,
        formatSize(g.bytes),
        g.complete ? 'complete' : 'incomplete',
      ]),
    ),
  );
  print(l.restorable ? `restorable from ${l.restorable.from} to ${l.restorable.to}` : 'nothing restorable yet');
}

export function registerReplica(program: Command): void {
  program
    .command('promote')
    .description('make the standby running on this machine (coffer serve --standby) the primary')
    .option('-p, --port <port>', 'the port the standby listens on (env PORT, default 3000)')
    .option('--json', 'print machine-readable JSON on stdout')
    .action(
      action(async (opts: { port?: string; json?: boolean }) => {
        const config = configFrom({ port: opts.port });
        const base = `http://127.0.0.1:${config.port}`;
        const res = await fetch(`${base}/api/admin/promote`, { method: 'POST' }).catch(() => null);
        if (!res) throw new UsageError(`no standby answers at ${base}: start one with coffer serve --standby DEST, or pass --port`);
        const body = (await res.json().catch(() => null)) as { error?: string; generation?: string } | null;
        if (!body) throw new UsageError(`what answers at ${base} is not a Coffer standby (HTTP ${res.status}): pass the standby's --port`);
        if (!res.ok) throw new UsageError(body.error ?? `the standby answered ${res.status}`);
        if (opts.json) return printJson(body);
        print(
          `promoted: the database is the replica's generation ${body.generation}, checked; the server now starts as the primary at ${base}`,
        );
      }),
    );
  const replica = program.command('replica').description('inspect a replica that REPLICATE_TO writes (see docs/replication.md)');
  adminCommand(
    replica
      .command('list <dest>')
      .description('the generations at DEST (a directory or s3://bucket/prefix) and the moments a restore can reach'),
  ).action(
    action(async (dest: string, opts: { json?: boolean }) => {
      const { listReplica } = await import('../src/services/maintenance/replica-restore.ts');
      const listing = await listReplica(storeAt(dest));
      if (opts.json) return printJson(listing);
      printListing(listing);
    }),
  );
  adminCommand(
    replica
      .command('verify <dest>')
      .description('rebuild every generation at DEST in a temporary directory and check it, without restoring')
      .addHelpText(
        'after',
        `
Every object is authenticated with the passphrase (BACKUP_PASSPHRASE_FILE, else asked for), the segments
are checked for gaps, and each generation's database is built and integrity-checked. Exit 0 when sound,
1 naming the first object that is missing, altered, cut short or out of place.`,
      ),
  ).action(
    action(async (dest: string, opts: { dataDir?: string; json?: boolean }) => {
      const { verifyReplica } = await import('../src/services/maintenance/replica-restore.ts');
      const result = await verifyReplica(storeAt(dest), { passphrase: replicaPassphrase(configFrom(opts)) });
      if (opts.json) return printJson({ ok: true, ...result });
      printListing(result);
      print(`sound: ${result.checked.generations} generation(s) rebuilt and checked, ${result.checked.segments} segment(s) applied`);
    }),
  );
}
