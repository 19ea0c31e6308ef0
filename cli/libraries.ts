import type { Command } from 'commander';
import type { LibraryView } from '../src/contract/libraries.ts';
import { formatSize } from '../src/contract/size.ts';
import type { AppContext } from '../src/context.ts';
import type { ScanResult } from '../src/services/libraries/scanner.ts';
import { action, adminCommand, print, printJson, progressBar, table, UsageError, withContext } from './common.ts';

interface Flags {
  dataDir?: string;
  json?: boolean;
}

function libraryByRef(ctx: AppContext, ref: string): LibraryView {
  const library = ctx.services.libraries.find(ref);
  if (!library) throw new UsageError(`no library named ${ref}`);
  return library;
}

/** Scans with a progress line on stderr (the total is the last scan's count, when there was one). */
async function scanWithProgress(ctx: AppContext, library: LibraryView): Promise<ScanResult> {
  const bar = progressBar();
  const total = library.scannedAt ? library.files + library.folders : null;
  const result = await ctx.services.libraries.scan(library.id, (p) => bar.update('scanning', p.entries, total));
  bar.done();
  return result;
}

function summary(r: ScanResult): string {
  if (r.error) return r.error;
  return `${r.entries.toLocaleString('en-US')} entries: ${r.added} added, ${r.updated} changed, ${r.moved} moved, ${r.removed} removed${r.skipped ? `, ${r.skipped} left out (names Coffer cannot show)` : ''}`;
}

export function registerLibraries(program: Command): void {
  const libraries = program
    .command('libraries')
    .description('host folders shown as they are (not encrypted) in an account’s My files: add, list, rescan, remove');

  adminCommand(libraries.command('add <path>').description('add a host folder as a library of an account, and scan it'))
    .requiredOption('--name <name>', 'the folder’s name at the top of My files')
    .requiredOption('--owner <email>', 'the account it belongs to')
    .option('--read-only', 'every write through Coffer is refused ("This library is read-only")')
    .option('--group <name>', 'the group whose members reach it too (as editors; viewers when read-only)')
    .action(
      action((path: string, opts: Flags & { name: string; owner: string; readOnly?: boolean; group?: string }) =>
        withContext(opts, async (ctx) => {
          const { library, warning } = ctx.services.libraries.add('cli', {
            path,
            name: opts.name,
            owner: opts.owner,
            readOnly: opts.readOnly,
            group: opts.group,
          });
          process.stderr.write(`coffer: warning: ${warning}\n`);
          const result = await scanWithProgress(ctx, library);
          if (opts.json) return printJson({ library: ctx.services.libraries.get(library.id), scan: result, warning });
          print(`added library ${library.name} (${library.id}) at ${library.path} for ${library.ownerEmail}`);
          print(summary(result));
        }),
      ),
    );

  adminCommand(libraries.command('list').description('every library, with what its last scan found')).action(
    action((opts: Flags) =>
      withContext(opts, (ctx) => {
        const all = ctx.services.libraries.list().libraries;
        if (opts.json) return printJson({ libraries: all });
        if (all.length === 0) return print('no libraries yet: add one with `coffer libraries add PATH --name NAME --owner EMAIL`');
        print(
          table(
            ['NAME', 'ID', 'PATH', 'OWNER', 'MODE', 'FILES', 'SIZE', 'STATE'],
            all.map((l) => [
              l.name,
              l.id,
              l.path,
              l.ownerEmail + (l.group ? ` + ${l.group.name}` : ''),
              l.readOnly ? 'read-only' : 'writable',
              String(l.files),
              formatSize(l.bytes),
              l.available ? (l.scanError ?? (l.scannedAt ? `scanned ${l.scannedAt.slice(0, 16)}` : 'not scanned')) : 'unavailable',
            ]),
          ),
        );
      }),
    ),
  );

  adminCommand(libraries.command('rescan <library>').description('scan a library now (by name or id)')).action(
    action((ref: string, opts: Flags) =>
      withContext(opts, async (ctx) => {
        const result = await scanWithProgress(ctx, libraryByRef(ctx, ref));
        if (opts.json) return printJson({ scan: result });
        print(summary(result));
        if (result.error) throw new UsageError(result.error);
      }),
    ),
  );

  adminCommand(
    libraries.command('remove <library>').description('forget a library: its items leave Coffer; the host folder is not touched'),
  ).action(
    action((ref: string, opts: Flags) =>
      withContext(opts, (ctx) => {
        const result = ctx.services.libraries.remove('cli', libraryByRef(ctx, ref).id);
        if (opts.json) return printJson(result);
        print(result.message);
      }),
    ),
  );
}
