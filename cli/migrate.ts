import type { Command } from 'commander';
import { action, addDataDirOption, configFrom } from './common.ts';

export function registerMigrate(program: Command): void {
  addDataDirOption(program.command('migrate').description('apply pending database migrations to an existing instance and exit')).action(
    action(async (opts: { dataDir?: string }) => {
      const { migrateInstance } = await import('../src/composition.ts');
      const applied = migrateInstance(configFrom(opts));
      process.stdout.write(applied.length ? `applied ${applied.join(', ')}\n` : 'database is up to date\n');
    }),
  );
}
