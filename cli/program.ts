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
import { EXIT_CODES_HELP } from './common.ts';

/** The `coffer` command line: server and admin tools in one executable. */
export function buildProgram(): Command {
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
  registerServe(program);
  registerInit(program);
  registerMigrate(program);
  registerSetupCode(program);
  registerUsers(program);
  registerGroups(program);
  registerLibraries(program);
  registerSettings(program);
  registerOrphans(program);
  registerBackup(program);
  registerReplica(program);
  registerRollback(program);
  registerExport(program);
  registerKeys(program);
  registerDoctor(program);
  registerAudit(program);
  registerShares(program);
  registerWebhooks(program);
  registerStorage(program);
  registerSearch(program);
  registerThumbnails(program);
  return program;
}
