import type { Command } from 'commander';
import { ConfigError, loadConfig, type Config, type ConfigFlags } from '../src/config.ts';
import { StartupError } from '../src/data-dir.ts';
import { openContext, type AppContext } from '../src/context.ts';
import { AppError } from '../src/errors.ts';
import { createLogger } from '../src/log.ts';

/** Exit codes: 0 success, 1 a problem the user can fix (message on stderr), 2 a bug (stack on stderr). */
export const EXIT_USER_ERROR = 1;
export const EXIT_BUG = 2;

export function addDataDirOption(cmd: Command): Command {
  return cmd.option('-d, --data-dir <dir>', 'data directory (env COFFER_DATA_DIR, default ./data)');
}

export function configFrom(flags: ConfigFlags): Config {
  return loadConfig(flags, process.env);
}

/** Opens the data dir beside a possibly running server (no worker, no lock), runs fn, closes. */
export async function withContext<T>(flags: ConfigFlags, fn: (ctx: AppContext) => Promise<T> | T): Promise<T> {
  const config = configFrom(flags);
  const ctx = openContext(config, { mode: 'cli', logger: createLogger('silent') });
  try {
    return await fn(ctx);
  } finally {
    ctx.close();
  }
}

export function isUserError(err: unknown): err is Error {
  return err instanceof StartupError || err instanceof ConfigError || err instanceof AppError || err instanceof UsageError;
}

/** A command-line mistake: printed as one line, exit 1. */
export class UsageError extends Error {}

/** Runs a command action, turning expected failures into one stderr line and a meaningful exit code. */
export function action<A extends unknown[]>(fn: (...args: A) => Promise<void> | void) {
  return async (...args: A) => {
    try {
      await fn(...args);
    } catch (err) {
      if (isUserError(err)) {
        process.stderr.write(`coffer: ${err.message}\n`);
        process.exit(EXIT_USER_ERROR);
      }
      process.stderr.write(`coffer: unexpected error\n${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exit(EXIT_BUG);
    }
  };
}
