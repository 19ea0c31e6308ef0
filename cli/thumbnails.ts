import type { Command } from 'commander';
import { action, adminCommand, print, printJson, progressBar, UsageError, withContext } from './common.ts';

interface Flags {
  dataDir?: string;
  json?: boolean;
  user?: string;
}

export function registerThumbnails(program: Command): void {
  const thumbnails = program.command('thumbnails').description('pictures of images, HEIC photos and PDFs');

  adminCommand(
    thumbnails
      .command('rebuild')
      .description('make every thumbnail again, beside the running server')
      .option('--user <email>', "only the files of this login's account"),
  ).action(
    action((opts: Flags) =>
      withContext(opts, async (ctx) => {
        let accountId: string | undefined;
        if (opts.user) {
          const login = ctx.services.accounts.findByEmail(opts.user);
          if (!login) throw new UsageError(`no user with email ${opts.user}`);
          accountId = login.parentUserId ?? login.id;
        }
        const bar = progressBar();
        try {
          const result = await ctx.services.thumbnails.rebuild({
            accountId,
            onProgress: (done, total) => bar.update('files', done, total),
          });
          bar.done();
          if (opts.json) printJson(result);
          else print(`made thumbnails of ${result.made} file(s); ${result.none} file(s) cannot have one`);
        } finally {
          ctx.services.thumbnails.close();
        }
      }),
    ),
  );
}
