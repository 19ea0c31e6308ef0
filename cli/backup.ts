import type { Command } from 'commander';
import { formatSize } from '../src/lib/size.ts';
import { action, adminCommand, print, printJson, withContext } from './common.ts';

export function registerBackup(program: Command): void {
  adminCommand(
    program
      .command('backup <file>')
      .description('write a consistent snapshot of the database to <file> and a manifest to <file>.manifest.json, while the server runs')
      .option('--force', 'replace <file> if it exists')
      .addHelpText(
        'after',
        `
The snapshot holds accounts, settings, the file tree and every file's wrapped data key. The file
contents (blobs/, or the S3 bucket) and the master key (secrets.json) are not in it: copy them
alongside, after the snapshot (see "Back up and restore" in the README; a bucket is backed up with its
own tools). Without secrets.json no file can be read.`,
      ),
  ).action(
    action((file: string, opts: { dataDir?: string; json?: boolean; force?: boolean }) =>
      withContext(opts, async (ctx) => {
        const { file: written, manifestFile, manifest } = await ctx.services.backup.create(file, { force: opts.force });
        if (opts.json) return printJson({ file: written, manifestFile, manifest });
        print(`database snapshot: ${written} (${formatSize(manifest.database.bytes)}, sha256 ${manifest.database.sha256.slice(0, 16)}…)`);
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
      }),
    ),
  );
}
