import type { Command } from 'commander';
import { action, adminCommand, print, printJson, UsageError, withContext } from './common.ts';

interface Flags {
  dataDir?: string;
  json?: boolean;
  user?: string;
}

export function registerSearch(program: Command): void {
  const search = program.command('search').description('content search: rebuild the index of words in documents');

  adminCommand(
    search
      .command('reindex')
      .description("extract every file's text again (one account's with --user); the running server does the work")
      .option('--user <email>', "only this account's files (an owner's email; a sub-user's means its owner's)"),
  ).action(
    action((opts: Flags) =>
      withContext(opts, (ctx) => {
        const { contentSearch, accounts } = ctx.services;
        if (!contentSearch.enabled()) throw new UsageError('content search is off: coffer settings set contentSearch true');
        let accountId: string | undefined;
        if (opts.user !== undefined) {
          const login = accounts.findByEmail(opts.user);
          if (!login) throw new UsageError(`no user with email ${opts.user}`);
          accountId = login.parentUserId ?? login.id;
        }
        const queued = contentSearch.reindex(accountId);
        if (opts.json) return printJson({ queued });
        print(`${queued} file(s) queued; the server extracts them in the background (progress in Admin → Instance)`);
      }),
    ),
  );
}
