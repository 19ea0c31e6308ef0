import { Command } from 'commander';
import { BACKEND_VERSION } from '../src/services/version.ts';
import { registerServe } from './serve.ts';
import { registerMigrate } from './migrate.ts';
import { registerUsers } from './users.ts';
import { registerSettings } from './settings.ts';
import { registerOrphans } from './orphans.ts';
import { registerBackup } from './backup.ts';
import { registerKeys } from './keys.ts';
import { registerDoctor } from './doctor.ts';
import { registerAudit } from './audit.ts';
import { registerStorage } from './storage.ts';
import { EXIT_CODES_HELP } from './common.ts';

/** The `coffer` command line: server and admin tools in one executable. */
export function buildProgram(): Command {
  const program = new Command('coffer')
    .description('Coffer: self-hosted file storage and sharing in one executable')
    .version(BACKEND_VERSION, '-v, --version', 'print the version')
    .showHelpAfterError('(run with --help for usage)')
    .addHelpText(
      'after',
      `
Admin commands open the data directory directly and are safe while the server runs.
Each takes --data-dir (or COFFER_DATA_DIR) and --json.
${EXIT_CODES_HELP}`,
    );
  registerServe(program);
  registerMigrate(program);
  registerUsers(program);
  registerSettings(program);
  registerOrphans(program);
  registerBackup(program);
  registerKeys(program);
  registerDoctor(program);
  registerAudit(program);
  registerStorage(program);
  return program;
}
