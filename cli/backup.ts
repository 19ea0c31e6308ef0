import type { Command } from 'commander';
import { type Config, secretText } from '../src/config.ts';
import { formatSize } from '../src/contract/size.ts';
import type { PassphraseSource } from '../src/services/maintenance/restore.ts';
import {
  action,
  addDataDirOption,
  adminCommand,
  configFrom,
  print,
  printJson,
  progressBar,
  readSecret,
  untilInterrupted,
  UsageError,
  withContext,
} from './common.ts';
import { parseMoment, replicaPassphrase, storeAt } from './replica.ts';

const MiB = 1024 ** 2;

// Loaded when a restore, a check or a decryption runs: every other command starts without the server's modules.
const restoring = () => import('../src/services/maintenance/restore.ts');

/** BACKUP_PASSPHRASE_FILE's passphrase, or null: backups are then written unencrypted. */
function configuredPassphrase(config: Config): string | null {
  const file = config.backup.passphraseFile;
  return file ? secretText({ source: 'file', path: file }, 'BACKUP_PASSPHRASE_FILE') : null;
}

/** For reading an encrypted archive: BACKUP_PASSPHRASE_FILE, else asked on the terminal (or the first line of stdin). */
function passphraseFor(config: Config): PassphraseSource {
  return async () => {
    const passphrase = configuredPassphrase(config) ?? (await readSecret('Backup passphrase'));
    // Nothing typed, or no standard input (a cron job): not a wrong passphrase, a missing one.
    if (passphrase === '') {
      throw new UsageError(
        'the backup is encrypted and no passphrase was given: set BACKUP_PASSPHRASE_FILE, or type it on a terminal or on the first line of standard input',
      );
    }
    return passphrase;
  };
}

async function verify(archive: string | undefined, opts: { dataDir?: string; json?: boolean }): Promise<void> {
  if (!archive) throw new UsageError('name the archive to check: coffer backup verify FILE (to write a backup named verify, use ./verify)');
  const config = configFrom(opts);
  const bar = progressBar();
  const { verifyFullBackup } = await restoring();
  const result = await verifyFullBackup(archive, {
    passphrase: passphraseFor(config),
    onProgress: (p) => bar.update('checking (MiB)', Math.floor(p.done / MiB), Math.ceil(p.total / MiB)),
  });
  bar.done();
  if (opts.json) return printJson({ ok: true, ...result });
  print(`${result.file}: sound${result.encrypted ? ' (encrypted)' : ''}`);
  print(`the database (integrity ok), secrets.json and ${result.objects} object(s) match their checksums`);
  print(`backup taken ${result.header.createdAt} by Coffer ${result.header.cofferVersion}`);
}

async function decrypt(backup: string | undefined, opts: BackupOptions) {
  if (!backup || !opts.out) {
    throw new UsageError(
      'name the backup and where to write its database: coffer backup decrypt FILE --out DB (to write a backup named decrypt, use ./decrypt)',
    );
  }
  const { decryptDatabaseBackup } = await restoring();
  const config = configFrom(opts);
  const result = await decryptDatabaseBackup(backup, opts.out, {
    passphrase: passphraseFor(config),
    force: opts.force,
    dataDir: config.dataDir,
  });
  if (opts.json) return printJson(result);
  print(`${result.file}: the database, decrypted (${formatSize(result.bytes)}, integrity ok)`);
  print(result.matchesManifest ? 'it matches the manifest beside the backup' : 'no manifest beside the backup to check it against');
}

type BackupOptions = { dataDir?: string; json?: boolean; force?: boolean; full?: boolean; out?: string };

export function registerBackup(program: Command): void {
  adminCommand(
    program
      .command('backup <file> [archive]')
      .description(
        'back up while the server runs: with --full, everything in one archive; without, a database snapshot; `backup verify FILE` checks an archive',
      )
      .option('--full', 'one archive with the database snapshot, secrets.json, every stored object and a manifest of checksums')
      .option('--force', 'replace <file> if it exists')
      .option('--out <db>', 'with `backup decrypt FILE`: where to write the decrypted database')
      .addHelpText(
        'after',
        `
With --full, <file> is a tar archive that holds everything needed to bring the instance back with
\`coffer restore <file> --data-dir <empty dir>\`, including the master key: keep it as safe as the
server. Objects are not deleted while it is written, so it matches the database snapshot exactly. On S3,
the bucket's objects are read into the archive too, and the restore puts them on local disk.
Stopped by Ctrl-C or SIGTERM, it removes the unfinished archive and its snapshot, and exits 1.

Without --full, the snapshot holds accounts, settings, the file tree and every file's wrapped data key,
and a manifest goes to <file>.manifest.json. The file contents (blobs/, or the S3 bucket) and the master
key (secrets.json) are not in it: copy them alongside, after the snapshot (a bucket is backed up with its
own tools). Without secrets.json no file can be read. Stopped by Ctrl-C or SIGTERM, it removes the
unfinished snapshot, and exits 1.

With BACKUP_PASSPHRASE_FILE set, every backup, full or not, is encrypted with that passphrase (scrypt,
AES-256-GCM segments): nothing in it is readable without the passphrase.
\`coffer backup decrypt FILE --out DB\` writes an encrypted snapshot's database to DB, checked against
FILE.manifest.json when it is beside it (the manifest, never encrypted, holds counts and checksums only).

\`coffer backup verify FILE\` reads a full backup through and checks every part (each object, secrets.json
and the database, with its integrity) without restoring it: exit 0 when sound, 1 with the reason when not.
An encrypted archive's passphrase comes from BACKUP_PASSPHRASE_FILE, else it is asked for. To write a
backup to a file named verify (or decrypt), write ./verify (./decrypt).`,
      ),
  ).action(
    action((file: string, archive: string | undefined, opts: BackupOptions) => {
      if (file === 'verify') return verify(archive, opts);
      if (file === 'decrypt') return decrypt(archive, opts);
      if (archive !== undefined) throw new UsageError(`unexpected argument ${archive}: coffer backup <file> takes one file`);
      return withContext(opts, async (ctx) => {
        if (opts.full) {
          const bar = progressBar();
          const started = performance.now();
          const passphrase = configuredPassphrase(ctx.config);
          const interrupt = untilInterrupted('the unfinished archive was removed');
          const { file: written, manifest } = await ctx.services.backup
            .createFull(file, {
              force: opts.force,
              passphrase,
              signal: interrupt.signal,
              onProgress: (p) => bar.update('backing up (MiB)', Math.floor(p.done / MiB), Math.ceil(p.total / MiB)),
            })
            .finally(() => {
              interrupt.release();
              bar.done();
            });
          if (opts.json) return printJson({ file: written, manifest: { ...manifest, objectSums: undefined } });
          const seconds = (performance.now() - started) / 1000;
          print(`full backup: ${written}${passphrase ? ' (encrypted with BACKUP_PASSPHRASE_FILE)' : ''}`);
          print(
            `contains the database (${formatSize(manifest.database.bytes)}), secrets.json and ${manifest.objects} object(s); ${manifest.counts.users} user(s), ${manifest.counts.files} file(s)`,
          );
          print(`took ${seconds.toFixed(1)} s; restore with: coffer restore ${written} --data-dir <empty directory>`);
          if (manifest.missingObjects.length) {
            process.stderr.write(
              `coffer: warning: ${manifest.missingObjects.length} object(s) the database names were already missing from storage (coffer doctor lists them)\n`,
            );
          }
          if (manifest.masterKeysNotInSecrets.length) {
            process.stderr.write(
              'coffer: warning: the master key comes from COFFER_MASTER_KEY(_FILE), not secrets.json: keep it with this backup, restore needs it\n',
            );
          }
          return;
        }
        const passphrase = configuredPassphrase(ctx.config);
        const interrupt = untilInterrupted('the unfinished snapshot was removed');
        const {
          file: written,
          manifestFile,
          manifest,
        } = await ctx.services.backup
          .create(file, { force: opts.force, passphrase, signal: interrupt.signal })
          .finally(() => interrupt.release());
        if (opts.json) return printJson({ file: written, manifestFile, manifest });
        print(
          `database snapshot: ${written} (${formatSize(manifest.database.bytes)}, sha256 ${manifest.database.sha256.slice(0, 16)}…)${passphrase ? ', encrypted with BACKUP_PASSPHRASE_FILE' : ''}`,
        );
        print(`manifest:          ${manifestFile}`);
        print(
          `contains ${manifest.counts.users} user(s), ${manifest.counts.files} file(s) (${formatSize(manifest.counts.storedBytes)}), ${manifest.counts.folders} folder(s)`,
        );
        if (manifest.storage.driver === 's3') {
          print(`NOT in this backup: the file contents in ${manifest.alongside.blobs} (the S3 bucket is not copied).`);
          print(
            `Back the bucket up with its own tools (versioning, replication, rclone sync), and copy ${manifest.alongside.secrets} alongside.`,
          );
        } else print(`now copy alongside: ${manifest.alongside.blobs}/ and ${manifest.alongside.secrets}`);
      });
    }),
  );

  addDataDirOption(
    program
      .command('restore [file]')
      .description(
        'restore a full backup (coffer backup --full), or a replica (--from-replica), into an empty or new data directory, checking every part',
      )
      .option('--from-replica <dest>', 'restore the database and secrets.json from the replica at DEST (a directory or s3://bucket/prefix)')
      .option('--at <time>', 'with --from-replica: the state as shipped by this time (ISO 8601 or Unix seconds), to the second')
      .option('--json', 'print machine-readable JSON on stdout')
      .addHelpText(
        'after',
        `
Every part is checked against the archive's manifest (sha256) and the database's integrity; if anything
does not match, nothing is kept and the directory is left as it was; so too when stopped by Ctrl-C or
SIGTERM (exit 1). A directory that is not empty is refused: move the old data directory aside first; one
that a restore cut off part-way (kill -9, a power cut) left is cleared and the restore starts over. Then
start the server on the restored directory (it refuses one whose restore did not finish).
An encrypted archive's passphrase comes from BACKUP_PASSPHRASE_FILE, else it is asked for on the
terminal (or read from the first line of standard input).

With --from-replica DEST the newest state the replica holds (or the state at --at) is rebuilt, every
segment authenticated, and the database integrity-checked before it is moved into place. File contents
are not in a replica: with S3 storage they are in the bucket; with local storage copy blobs/ alongside.`,
      ),
  ).action(
    action(async (file: string | undefined, opts: { dataDir?: string; json?: boolean; fromReplica?: string; at?: string }) => {
      const config = configFrom(opts);
      if (opts.fromReplica) {
        if (file) throw new UsageError('give either a backup file or --from-replica DEST, not both');
        const at = opts.at === undefined ? undefined : parseMoment(opts.at);
        const { restoreFromReplica } = await import('../src/services/maintenance/replica-restore.ts');
        const result = await restoreFromReplica(storeAt(opts.fromReplica), config.dataDir, { at, passphrase: replicaPassphrase(config) });
        if (opts.json) return printJson(result);
        print(`restored into ${result.dataDir}: the database (integrity ok, schema ${result.schema}) and secrets.json`);
        print(`state as shipped at ${result.stateAt} (generation ${result.generation}, ${result.segments} segment(s) applied)`);
        const t = result.seconds;
        print(
          `took ${(t.snapshot + t.segments + t.check).toFixed(1)} s: snapshot ${t.snapshot.toFixed(1)} s, segments ${t.segments.toFixed(1)} s, integrity check ${t.check.toFixed(1)} s`,
        );
        print(`start the server on it: coffer serve --data-dir ${result.dataDir}`);
        return;
      }
      if (opts.at) throw new UsageError('--at goes with --from-replica');
      if (!file) throw new UsageError('name the backup to restore, or --from-replica DEST');
      const bar = progressBar();
      const interrupt = untilInterrupted('the data directory was left as it was found');
      const { restoreFullBackup } = await restoring();
      const result = await restoreFullBackup(file, config.dataDir, {
        passphrase: passphraseFor(config),
        signal: interrupt.signal,
        onProgress: (p) => bar.update('restoring (MiB)', Math.floor(p.done / MiB), Math.ceil(p.total / MiB)),
      }).finally(() => {
        interrupt.release();
        bar.done();
      });
      if (opts.json) return printJson(result);
      if (result.startedOver)
        print(`a restore into ${result.dataDir} had been cut off part-way: what it wrote was removed, and the restore started over`);
      print(`restored into ${result.dataDir}: the database, secrets.json and ${result.objects} object(s), all checked`);
      print(`backup taken ${result.header.createdAt} by Coffer ${result.header.cofferVersion}`);
      if (result.masterKeysNotInSecrets.length) {
        process.stderr.write(
          'coffer: warning: the files are under a master key not in secrets.json: set COFFER_MASTER_KEY before starting\n',
        );
      }
      print(`start the server on it: coffer serve --data-dir ${result.dataDir}`);
    }),
  );
}
