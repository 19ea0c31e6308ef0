import fs from 'node:fs';
import type { Command } from 'commander';
import { dataPaths, prepareDataDir, requireDataDirOwner } from '../src/data-dir.ts';
import { loadSecrets } from '../src/storage/secrets-file.ts';
import { closeDatabase, openDatabase } from '../src/db/client.ts';
import { migrate } from '../src/db/migrate.ts';
import { action, adminCommand, configFrom, print, printJson } from './common.ts';

export function registerInit(program: Command): void {
  adminCommand(
    program
      .command('init')
      .description('create a new, empty instance: the data directory, its database, and secrets.json with a new master key')
      .addHelpText(
        'after',
        `
Only this command and \`serve\` create a data directory; every other command refuses one that does not
exist, so a mistyped --data-dir never starts a second instance with its own key. Run it as the user the
service runs as. A directory that already holds an instance is left as it is.`,
      ),
  ).action(
    action((opts: { dataDir?: string; json?: boolean }) => {
      const config = configFrom(opts);
      const paths = dataPaths(config.dataDir);
      requireDataDirOwner(paths.root);
      const existed = fs.existsSync(paths.database);
      if (!existed) {
        prepareDataDir(paths);
        loadSecrets(config, paths);
        const db = openDatabase(paths.database);
        try {
          migrate(db);
        } finally {
          closeDatabase(db);
        }
      }
      if (opts.json) return printJson({ dataDir: paths.root, created: !existed });
      if (existed) return print(`${paths.root} already holds a Coffer instance; nothing changed`);
      print(`created a new Coffer instance in ${paths.root}`);
      print(`back up ${paths.secrets} now: without its master key no stored file can be read`);
    }),
  );
}
