import type { Command } from 'commander';
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
    action(async (opts: { dataDir?: string; json?: boolean }) => {
      const { createInstance } = await import('../src/composition.ts');
      const { paths, created } = createInstance(configFrom(opts));
      if (opts.json) return printJson({ dataDir: paths.root, created });
      if (!created) return print(`${paths.root} already holds a Coffer instance; nothing changed`);
      print(`created a new Coffer instance in ${paths.root}`);
      print(`back up ${paths.secrets} now: without its master key no stored file can be read`);
    }),
  );
}
