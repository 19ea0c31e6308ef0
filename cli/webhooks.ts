import type { Command } from 'commander';
import { action, adminCommand, print, printJson, table, UsageError, withContext } from './common.ts';

/** `coffer webhooks list|test|disable`: every hook on the instance, a test event to one, and stopping one. */
export function registerWebhooks(program: Command): void {
  const webhooks = program
    .command('webhooks')
    .description("webhooks: list the instance's and every account's, send a test event, disable one");
  adminCommand(
    webhooks
      .command('list')
      .description('every hook: id, owner (instance or an account email), URL, events, enabled')
      .option('--user <email>', "only this account's hooks (a sub-user's email lists its owner's)"),
  ).action(
    action((opts: { dataDir?: string; json?: boolean; user?: string }) =>
      withContext(opts, (ctx) => {
        const { webhooks: service, accounts } = ctx.services;
        let only: string | undefined;
        if (opts.user) {
          const login = accounts.findByEmail(opts.user);
          if (!login) throw new UsageError(`no account has the email ${opts.user}`);
          only = login.parentUserId ?? login.id;
        }
        const hooks = service.all().filter((h) => only === undefined || h.accountId === only);
        if (opts.json) return printJson({ webhooks: hooks });
        if (hooks.length === 0) return print('no webhooks');
        const owner = (accountId: string | null) =>
          accountId === null ? 'instance' : (ctx.repos.users.byId(accountId)?.email ?? accountId);
        print(
          table(
            ['ID', 'OWNER', 'URL', 'EVENTS', 'ENABLED'],
            hooks.map((h) => [
              h.id,
              owner(h.accountId),
              h.url,
              h.events.join(','),
              h.enabled ? 'yes' : `no${h.disabledReason ? ` (${h.disabledReason})` : ''}`,
            ]),
          ),
        );
      }),
    ),
  );
  adminCommand(
    webhooks
      .command('test')
      .description('queue a webhook.test event to the hook; the running server sends it (see its delivery log)')
      .argument('<id>'),
  ).action(
    action((id: string, opts: { dataDir?: string; json?: boolean }) =>
      withContext(opts, (ctx) => {
        const service = ctx.services.webhooks;
        const { delivery } = service.sendTest(service.scopeOf(id), id);
        if (opts.json) return printJson({ delivery });
        print(`queued the test delivery ${delivery.id} (webhook-id ${delivery.messageId}); the running server sends it`);
      }),
    ),
  );
  adminCommand(
    webhooks.command('disable').description('stop sending to the hook; its pending deliveries are failed').argument('<id>'),
  ).action(
    action((id: string, opts: { dataDir?: string; json?: boolean }) =>
      withContext(opts, (ctx) => {
        const service = ctx.services.webhooks;
        const { webhook } = service.disable(service.scopeOf(id), id);
        if (opts.json) return printJson({ webhook });
        print(`disabled the webhook ${webhook.id} to ${webhook.url}`);
      }),
    ),
  );
}
