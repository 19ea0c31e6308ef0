import { Command } from 'commander';
import { BACKEND_VERSION } from '../src/services/version.ts';
import { registerServe } from './serve.ts';
import { registerMigrate } from './migrate.ts';

/** The `coffer` command line: server and admin tools in one executable. */
export function buildProgram(): Command {
  const program = new Command('coffer')
    .description('Coffer: self-hosted file storage and sharing in one executable')
    .version(BACKEND_VERSION, '-v, --version', 'print the version')
    .showHelpAfterError('(run with --help for usage)');
  registerServe(program);
  registerMigrate(program);
  return program;
}
