import type { Command } from 'commander';
import { action, adminCommand, print, printJson, withContext } from './common.ts';

export function registerSetupCode(program: Command): void {
  adminCommand(
    program
      .command('setup-code')
      .description('print the one-time code the first sign-up needs while no account exists')
      .addHelpText(
        'after',
        `
While an instance has no account and the server listens beyond loopback (HOST other than 127.0.0.1,
::1 or localhost), creating the first account (the admin) in the web app needs this code; the server
also prints it when it starts. Once an account exists the code has no use and this prints that.`,
      ),
  ).action(
    action((opts: { dataDir?: string; json?: boolean }) =>
      withContext(opts, (ctx) => {
        const code = ctx.services.setupCode.current();
        if (opts.json) return printJson({ setupCode: code });
        print(code ?? 'no setup code: this instance already has an account (sign in, or see `coffer users list`)');
      }),
    ),
  );
}
