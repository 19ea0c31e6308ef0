import type { Command } from 'commander';
import { dataPaths, loadSecrets, prepareDataDir } from '../src/data-dir.ts';
import { openDatabase } from '../src/db/client.ts';
import { migrate } from '../src/db/migrate.ts';
import { DatabaseTooNewError } from '../src/db/migrate.ts';
import { StartupError } from '../src/data-dir.ts';
import { action, addDataDirOption, configFrom } from './common.ts';

export function registerMigrate(program: Command): void {
  addDataDirOption(program.command('migrate').description('apply pending database migrations and exit')).action(
    action((opts: { dataDir?: string }) => {
      const config = configFrom(opts);
      const paths = dataPaths(config.dataDir);
      prepareDataDir(paths);
      // A fresh data dir gets its secrets now, or a later `serve` would find a database without its key.
      loadSecrets(config, paths);
      const db = openDatabase(paths.database);
      try {
        const { applied } = migrate(db);
        process.stdout.write(applied.length ? `applied ${applied.join(', ')}\n` : 'database is up to date\n');
      } catch (err) {
        if (err instanceof DatabaseTooNewError) throw new StartupError(err.message);
        throw err;
      } finally {
        db.$client.close();
      }
    }),
  );
}
