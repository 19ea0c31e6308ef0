import type { Command } from 'commander';
import { formatSize } from '../src/contract/size.ts';
import { describeLocation } from '../src/storage/drivers.ts';
import { checkConfiguration } from '../src/config.ts';
import { StartupError } from '../src/errors.ts';
import { action, adminCommand, AttentionNeeded, print, printJson, progressBar, withContext } from './common.ts';

export function registerDoctor(program: Command): void {
  adminCommand(
    program
      .command('doctor')
      .description(
        'check the database, usage counters, stored objects, keys and who may read the secret files; --fix repairs the usage counters and items out of reach',
      )
      .option(
        '--fix',
        `set each account's usage counter to the real sum of its files, and move items out of reach into a folder "Recovered items" at their account's root`,
      ),
  ).action(
    action(async (opts: { dataDir?: string; json?: boolean; fix?: boolean }) => {
      // The file's problems are named, not refused: the diagnosis runs with its other lines and values.
      const file = checkConfiguration(process.env);
      const configFile = { path: file.file, problems: file.problems };
      const printConfigFile = () => {
        if (file.file) print(`configuration file ${file.file}: ${file.problems.length ? `${file.problems.length} problem(s)` : 'ok'}`);
        for (const p of file.problems) print(`  ${p}`);
        if (file.problems.length) {
          print(
            '  correct or remove these lines (coffer serve --help lists the settings): the service does not start with a line or value it refuses',
          );
        }
      };
      let opened = false;
      try {
        await withContext(
          opts,
          async (ctx) => {
            opened = true;
            const bar = progressBar();
            const checked = await ctx.services.doctor.check({ fix: opts.fix, onProgress: (p) => bar.update('objects', p.done, p.total) });
            bar.done();
            const r = { ...checked, ok: checked.ok && file.problems.length === 0, configFile };
            if (opts.json) printJson(r);
            else {
              printConfigFile();
              print(`database integrity: ${r.database.integrity}`);
              for (const m of r.database.messages) print(`  ${m}`);
              print(`usage counters: ${r.usage.mismatches.length} of ${r.usage.accounts} account(s) wrong`);
              for (const m of r.usage.mismatches) {
                print(
                  `  ${m.email}: recorded ${formatSize(m.recorded)} (${m.recorded}), actual ${formatSize(m.actual)} (${m.actual})${m.fixed ? ' — fixed' : ''}`,
                );
              }
              if (r.usage.mismatches.length && !opts.fix) print('  repair with: coffer doctor --fix');
              print(`stored objects: ${r.missingObjects.count} of ${r.missingObjects.checked} file row(s) have no stored object`);
              for (const m of r.missingObjects.items) print(`  ${m.id} ${m.name} (key ${m.storageKey})`);
              if (r.missingObjects.count) print('  review with: coffer orphans scan');
              print(`items out of reach: ${r.unreachableItems.count} live item(s) under a folder that is gone`);
              for (const m of r.unreachableItems.items) print(`  ${m.id} ${m.name} (account ${m.accountId})`);
              for (const g of r.unreachableItems.recovered ?? [])
                print(`  moved ${g.items.length} item(s) of account ${g.accountId} into the folder "${g.folderName}" at its root — fixed`);
              for (const l of r.unreachableItems.left ?? []) print(`  ${l.id} left where it is: ${l.reason}`);
              if (r.unreachableItems.count && !opts.fix) print('  repair with: coffer doctor --fix');
              print(
                `master key ${r.keys.currentKeyId}: ${r.keys.notCurrent} file key(s) under older keys, ${r.keys.unavailable} under keys missing from secrets.json`,
              );
              if (r.keys.notCurrent > r.keys.unavailable) print('  finish with: coffer keys rotate');
              print(`secret files: ${r.exposedSecrets.length ? `${r.exposedSecrets.length} open to other users` : 'ok'}`);
              for (const f of r.exposedSecrets)
                print(`  ${f.path} has mode ${f.mode}: its group or other users may read it; fix with: chmod 600 ${shellWord(f.path)}`);
              print(`audit queue: ${r.auditQueue.pending} pending, ${r.auditQueue.failed} failed`);
              print(
                `disk: ${formatSize(r.disk.free)} free of ${formatSize(r.disk.total)}, ${formatSize(r.disk.reserve)} kept for the database${r.disk.low ? ' — LOW' : ''}`,
              );
              if (r.disk.low)
                print(
                  '  uploads and copies are refused (507) once less than the reserve is free: empty the trash, delete files or add storage',
                );
              const u = r.uploads;
              print(
                `resumable uploads: ${u.unfinished} unfinished, ${u.expired.length} past their expiry, ${u.strayStaged.length} staged object(s) no upload owns`,
              );
              for (const e of u.expired) print(`  ${e.id} ${e.name}: ${e.offset} of ${e.length} bytes, expired ${e.expiresAt}`);
              for (const s of u.strayStaged) print(`  staged ${s.key} (${formatSize(s.size)}), last written ${s.lastModified}`);
              if (u.expired.length || u.strayStaged.length)
                print('  the running server deletes these within the hour (they hold no finished file)');
              print(`storage: ${describeLocation(r.storage.location)}`);
              for (const c of r.storage.checks) print(`  ${c.step} of a probe object: ${c.ok ? 'ok' : `FAILED: ${c.error}`}`);
              const rep = r.replication;
              if (rep) {
                print(
                  `replication to ${rep.destination}: ${formatSize(rep.backlogBytes)} waiting on disk, ${Math.round(rep.lagSeconds)} s behind`,
                );
                if (rep.warning) print(`  ${rep.warning}`);
              }
              for (const n of r.settings) print(`settings: ${n}`);
              print(r.ok ? 'no problems found' : 'problems found');
            }
            if (!r.ok) throw new AttentionNeeded('');
          },
          { env: file.env },
        );
      } catch (err) {
        // The instance did not open (a data directory that is not there): the file's problems, which may say why, go first.
        if (opened || !(err instanceof StartupError) || file.problems.length === 0) throw err;
        if (opts.json) printJson({ ok: false, configFile });
        else printConfigFile();
        throw err;
      }
    }),
  );
}

/** A path as one shell word: quoted when it holds anything but plain characters. */
function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}
