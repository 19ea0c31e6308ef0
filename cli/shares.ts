import type { Command } from 'commander';
import { action, adminCommand, print, printJson, serverOrigin, table, UsageError, withContext } from './common.ts';

const PAGE = 200;

/** `coffer shares list` and `coffer shares revoke`: every public link on the instance, and removing one. */
export function registerShares(program: Command): void {
  const shares = program.command('shares').description('public share links: list them with their options, revoke one');
  adminCommand(
    shares
      .command('list')
      .description('newest first: token, item, mode, password, downloads, expiry, last use')
      .option('--user <email>', "only this account's links (a sub-user's email lists its owner's)"),
  ).action(
    action((opts: { dataDir?: string; json?: boolean; user?: string }) =>
      withContext(opts, (ctx) => {
        const { shares: service, accounts } = ctx.services;
        let accountId: string | null = null;
        if (opts.user) {
          const login = accounts.findByEmail(opts.user);
          if (!login) throw new UsageError(`no account has the email ${opts.user}`);
          accountId = login.parentUserId ?? login.id;
        }
        // Links point at the share base URL when one is set, else where people open the server.
        const origin = serverOrigin(ctx.config);
        const links = [];
        let cursor: string | undefined;
        do {
          const page = service.list(accountId, { limit: PAGE, cursor }, origin);
          links.push(...page.links);
          cursor = page.nextCursor ?? undefined;
        } while (cursor);
        if (opts.json) return printJson({ links });
        if (links.length === 0) return print('no share links');
        print(
          table(
            ['TOKEN', 'ITEM', 'MODE', 'PASSWORD', 'DOWNLOADS', 'EXPIRES', 'LAST USED'],
            links.map((l) => [
              l.token,
              l.itemName,
              l.mode,
              l.hasPassword ? 'yes' : 'no',
              l.maxDownloads === null ? String(l.downloads) : `${l.downloads}/${l.maxDownloads}`,
              l.expiresAt ?? 'never',
              l.lastUsedAt ?? '-',
            ]),
          ),
        );
      }),
    ),
  );
  adminCommand(
    shares
      .command('revoke')
      .description('remove a link: its URL answers 404 from now on')
      .argument('<token>')
      // A token is random base64url and may begin with "-": it is the token, not an unknown option.
      .allowUnknownOption(),
  ).action(
    action((token: string, opts: { dataDir?: string; json?: boolean }) =>
      withContext(opts, (ctx) => {
        const result = ctx.services.shares.revoke('cli', token);
        if (opts.json) return printJson({ revoked: token, itemId: result.itemId });
        print(`revoked the link ${token}`);
      }),
    ),
  );
}
