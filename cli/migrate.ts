import type { Command } from 'commander';
import { dataPaths, requireDataDirOwner, requireExistingDataDir } from '../src/data-dir.ts';
import { StartupError } from '../src/errors.ts';
import { closeDatabase, openDatabase } from '../src/db/client.ts';
import { DatabaseTooNewError } from '../src/db/migrate.ts';
import { upgradeDatabase } from '../src/services/maintenance/upgrade.ts';
import { action, addDataDirOption, configFrom } from './common.ts';

export function registerMigrate(program: Command): void {
  addDataDirOption(program.command('migrate').description('apply pending database migrations to an existing instance and exit')).action(
    action((opts: { dataDir?: string }) => {
      const paths = dataPaths(configFrom(opts).dataDir);
      requireDataDirOwner(paths.root);
      requireExistingDataDir(paths);
      const db = openDatabase(paths.database);
      try {
        const { applied } = upgradeDatabase(db, paths, { announce: (line) => process.stderr.write(`coffer: ${line}\n`) });
        process.stdout.write(applied.length ? `applied ${applied.join(', ')}\n` : 'database is up to date\n');
      } catch (err) {
        if (err instanceof DatabaseTooNewError) throw new StartupError(err.message);
        throw err;
      } finally {
        closeDatabase(db);
      }
    }),
  );
}
