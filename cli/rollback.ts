import type { Command } from 'commander';
import { action, addDataDirOption, configFrom, print, printJson, table } from './common.ts';

export function registerRollback(program: Command): void {
  addDataDirOption(
    program
      .command('rollback')
      .description(
        'put back the database and secrets.json as they were before an upgrade, for the older Coffer; without --to, list the snapshots',
      )
      .option('--to <snapshot>', 'a snapshot directory under <data dir>/snapshots/')
      .option('--json', 'print machine-readable JSON on stdout')
      .addHelpText(
        'after',
        `
Before it migrates a database, Coffer writes the database and secrets.json into
<data dir>/snapshots/<old version>+<its commit>-<time>/ (the newest three are kept; one taken before
Coffer recorded commits is named <old version>-<time>, and the list shows each one's schema). With the server stopped,
\`coffer rollback --to <that directory>\` puts them back; then start the older executable. The database
being replaced is kept beside it as coffer.db.before-rollback-<time>, with its write-ahead log (-wal,
-shm) renamed alike, and the secrets.json being replaced as secrets.json.before-rollback-<time>. Stored files are only ever added by
an upgrade, so the older version finds every file it knew; files uploaded since the upgrade are not in
the older database (\`coffer orphans\` lists them).`,
      ),
  ).action(
    action(async (opts: { dataDir?: string; to?: string; json?: boolean }) => {
      const config = configFrom(opts);
      const { rollbackInstance, upgradeSnapshots } = await import('../src/composition.ts');
      if (!opts.to) {
        const { snapshots, snapshotsDir } = upgradeSnapshots(config);
        if (opts.json) return printJson({ snapshots });
        if (snapshots.length === 0) return print(`no snapshots in ${snapshotsDir}`);
        print(
          table(
            ['snapshot', 'version', 'schema', 'taken'],
            snapshots.map((s) => [s.dir, s.cofferVersion, s.schema, s.createdAt]),
          ),
        );
        return;
      }
      const { snapshot, keptAs, secretsKeptAs, root } = rollbackInstance(config, opts.to);
      if (opts.json) return printJson({ snapshot, keptAs, secretsKeptAs });
      print(`rolled back to the database of Coffer ${snapshot.cofferVersion} (${snapshot.createdAt})`);
      print(`the newer database is kept as ${keptAs}`);
      if (secretsKeptAs) print(`the newer secrets.json is kept as ${secretsKeptAs} (the kept database needs it)`);
      print(`now start Coffer ${snapshot.cofferVersion} on ${root}`);
    }),
  );
}
