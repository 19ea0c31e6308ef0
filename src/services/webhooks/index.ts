import type { AccountService } from '../accounts/accounts.ts';
import type { FilesServices } from '../files/index.ts';
import type { SharingServices } from '../sharing/index.ts';
import type { Tree } from '../files/tree.ts';
import type { Infrastructure } from '../infrastructure.ts';
import type { ScheduledBackupService } from '../maintenance/scheduled-backups.ts';
import { BusyRounds } from '../../db/busy.ts';
import { FailureSpell } from '../../lib/failure-spell.ts';
import { BACKEND_VERSION } from '../admin/version.ts';
import { Destinations } from './destination.ts';
import { WebhookSender } from './sender.ts';
import { WebhookService } from './webhooks.ts';

export interface WebhookServices {
  webhooks: WebhookService;
}

type WebhookDeps = {
  tree: Tree;
  accounts: AccountService;
  scheduledBackups: ScheduledBackupService;
} & Pick<FilesServices, 'changes'> &
  Pick<SharingServices, 'notifications' | 'shares'>;

/** How often the dispatcher looks for new change-log rows. */
const DISPATCH_INTERVAL_MS = 500;

/** Webhooks, and the events they are told of from where those happen: sign-ins, opened links, failed backups. */
export function createWebhookServices(infra: Infrastructure, d: WebhookDeps) {
  const destinations = new Destinations(infra.config.webhooks.allowedHosts, infra.config.webhooks.timeoutMs);
  const webhooks = new WebhookService({
    clock: infra.clock,
    log: infra.log,
    repo: infra.repos.webhooks,
    items: infra.repos.items,
    members: infra.repos.members,
    users: infra.repos.users,
    transactions: infra.repos.transactions,
    keyring: infra.keyring,
    queue: infra.queue,
    tree: d.tree,
    changes: d.changes,
    notifications: d.notifications,
    destinations,
    sender: new WebhookSender(destinations, infra.config.webhooks.timeoutMs, `Coffer-Webhooks/${BACKEND_VERSION}`),
  });
  d.accounts.onSignIn(({ login, method }) =>
    webhooks.emit(login.parentUserId ?? login.id, 'account.signed_in', { login: { id: login.id, email: login.email }, method }),
  );
  d.shares.onLinkOpened(({ link, item }) =>
    webhooks.emit(
      link.accountId,
      'share.link_opened',
      { link: { id: link.id }, item: { id: item.id, name: item.name, type: item.type } },
      item.id,
    ),
  );
  d.scheduledBackups.onFailure((run) =>
    webhooks.emit(null, 'backup.failed', { run: { id: run.id, trigger: run.trigger }, error: run.error }),
  );
  let timer: ReturnType<typeof setInterval> | null = null;
  // A round that found the database busy moved neither deliveries nor the cursor: the next round reads the same rows.
  const rounds = new BusyRounds(infra.log, 'webhook dispatcher');
  // Every half second while a full disk refuses the cursor's write: logged when it begins, then every five minutes.
  const failures = new FailureSpell(infra.log, 'the webhook dispatcher', () => infra.clock.elapsed());
  const dispatcher = {
    name: 'webhook dispatcher',
    start() {
      timer = setInterval(() => {
        try {
          while (rounds.run(() => webhooks.dispatch(), 0) > 0);
          failures.succeeded();
        } catch (err) {
          failures.failed('webhook dispatch failed', { err: err instanceof Error ? (err.stack ?? err.message) : String(err) });
        }
      }, DISPATCH_INTERVAL_MS);
    },
    stop() {
      if (timer) clearInterval(timer);
      timer = null;
    },
  };
  return { services: { webhooks } satisfies WebhookServices, lifecycles: { webhookDispatcher: dispatcher } };
}
