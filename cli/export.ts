import type { Command } from 'commander';
import { formatSize } from '../src/contract/size.ts';
import { action, adminCommand, AttentionNeeded, print, printJson, progressBar, untilInterrupted, withContext } from './common.ts';

const MiB = 1024 ** 2;

export function registerExport(program: Command): void {
  adminCommand(
    program
      .command('export')
      .description("write every account's files as an ordinary folder tree, decrypted: how you leave Coffer or read your files without it")
      .requiredOption('--to <dir>', 'the folder to write into: <dir>/<account email>/<path as in Coffer>')
      .option('--user <email>', "only this account's files (a sub-user's email exports its owner's account)")
      .option(
        '--include-trash',
        'trashed items too, under <dir>/<account email>/.trash/ (.trash (2)/ when a file or folder at the top has that name)',
      )
      .option('--include-versions', 'earlier versions of each file, beside it as <name>.versions/<time>-<name>')
      .addHelpText(
        'after',
        `
Files keep their names, folders and modification times as in Coffer. It works with the server running
or stopped, and it resumes: a second run leaves files that are already there with the right size and
time untouched and redoes missing and cut-short ones; stopped by Ctrl-C or SIGTERM, it removes the file it
was writing and exits 1. A name of more than 255 bytes (the most a file system takes) is shortened,
keeping its extension, with ~ and 8 characters that keep it apart. Anyone who can read <dir> can read
the files: write it somewhere only you can read, outside the data directory (a folder in it is refused).`,
      ),
  ).action(
    action((opts: { dataDir?: string; json?: boolean; to: string; user?: string; includeTrash?: boolean; includeVersions?: boolean }) =>
      withContext(opts, async (ctx) => {
        const bar = progressBar();
        const started = performance.now();
        const interrupt = untilInterrupted('the files written so far are whole; run the same export again to finish it');
        const result = await ctx.services.exporter
          .run({
            to: opts.to,
            user: opts.user,
            includeTrash: opts.includeTrash,
            includeVersions: opts.includeVersions,
            signal: interrupt.signal,
            onProgress: (p) => bar.update('exporting (MiB)', Math.floor(p.done / MiB), Math.ceil(p.total / MiB)),
          })
          .finally(() => {
            interrupt.release();
            bar.done();
          });
        if (opts.json) printJson(result);
        else {
          const seconds = (performance.now() - started) / 1000;
          print(`exported ${result.accounts.length} account(s) into ${result.dir}`);
          print(
            `${result.written} file(s) written (${formatSize(result.bytesWritten)}), ${result.unchanged} already there and left untouched, ${result.folders} folder(s); ${seconds.toFixed(1)} s`,
          );
          if (opts.includeVersions) print(`${result.versions} earlier version(s) written beside their files`);
          for (const f of result.failed) process.stderr.write(`coffer: could not export ${f.path}: ${f.reason}\n`);
        }
        if (result.failed.length)
          throw new AttentionNeeded(
            `${result.failed.length} file(s) could not be exported (the reasons are above; coffer doctor lists missing objects); run export again after fixing them`,
          );
      }),
    ),
  );
}
