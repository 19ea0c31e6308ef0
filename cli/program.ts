import { Command } from 'commander';
import { versionLine } from '../src/services/admin/version.ts';
import { registerServe } from './serve.ts';
import { registerInit } from './init.ts';
import { registerMigrate } from './migrate.ts';
import { registerUsers } from './users.ts';
import { registerGroups } from './groups.ts';
import { registerLibraries } from './libraries.ts';
import { registerSettings } from './settings.ts';
import { registerOrphans } from './orphans.ts';
import { registerBackup } from './backup.ts';
import { registerReplica } from './replica.ts';
import { registerRollback } from './rollback.ts';
import { registerExport } from './export.ts';
import { registerKeys } from './keys.ts';
import { registerDoctor } from './doctor.ts';
import { registerAudit } from './audit.ts';
import { registerShares } from './shares.ts';
import { registerWebhooks } from './webhooks.ts';
import { registerSetupCode } from './setup-code.ts';
import { registerStorage } from './storage.ts';
import { registerSearch } from './search.ts';
import { registerThumbnails } from './thumbnails.ts';
import { EXIT_CODES_HELP, EXIT_PIPE_CLOSED } from './common.ts';
import { jitAtFullSpeed } from '../src/lib/jit-policy.ts';
import { unknownCofferVariables } from '../src/config.ts';

// Each top-level command by name, with what defines it (and the commands defined beside it).
const COMMANDS: Record<string, (program: Command) => void> = {
  serve: registerServe,
  init: registerInit,
  migrate: registerMigrate,
  'setup-code': registerSetupCode,
  users: registerUsers,
  groups: registerGroups,
  libraries: registerLibraries,
  settings: registerSettings,
  orphans: registerOrphans,
  backup: registerBackup,
  restore: registerBackup,
  replica: registerReplica,
  promote: registerReplica,
  rollback: registerRollback,
  export: registerExport,
  keys: registerKeys,
  doctor: registerDoctor,
  audit: registerAudit,
  shares: registerShares,
  webhooks: registerWebhooks,
  storage: registerStorage,
  search: registerSearch,
  thumbnails: registerThumbnails,
};

/**
 * The `coffer` command line: server and admin tools in one executable. Given the arguments it will parse, and
 * they name a command, only that command is defined: a server does not hold every admin command's options
 * and help. Help, an unknown command and the reference (no arguments) get every command.
 */
export function buildProgram(argv: readonly string[] = []): Command {
  const program = new Command('coffer')
    .description('Coffer: self-hosted file storage and sharing in one executable')
    .option('-v, --version', 'print the version, commit, build date and runtime')
    .showHelpAfterError('(run with --help for usage)')
    .addHelpText(
      'after',
      `
Admin commands open the data directory directly and are safe while the server runs.
Each takes --data-dir (or COFFER_DATA_DIR) and --json. Every command also reads the service's configuration
file, /etc/coffer/coffer.env (or the file COFFER_CONFIG names), under its flags and environment.
${EXIT_CODES_HELP}`,
    );
  // Worked out only when asked for: from source it asks git for the commit.
  program.on('option:version', () => {
    process.stdout.write(`${versionLine()}\n`);
    process.exit(0);
  });
  // Every command but serve works from its start; serve once it listens (cli/serve.ts).
  // A COFFER_* typo is named by every command: serve logs it with its start-up (src/server.ts), the others on stderr.
  program.hook('preAction', (_program, command) => {
    if (command.name() === 'serve') return;
    // A reader that stopped early (coffer audit list | head): the rest of the output has nowhere to go, so stop quietly,
    // with the status a command killed by SIGPIPE has (the runtime ignores the signal), so `set -o pipefail` sees it.
    // Not serve's: its log going away is a failure its service manager should see.
    process.stdout.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE') throw err;
      process.exit(EXIT_PIPE_CLOSED);
    });
    jitAtFullSpeed();
    for (const warning of unknownCofferVariables(process.env)) process.stderr.write(`coffer: warning: ${warning}\n`);
  });
  const name = argv[2];
  const only = name !== undefined && Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  for (const register of new Set(only ? [only] : Object.values(COMMANDS))) register(program);
  return program;
}
