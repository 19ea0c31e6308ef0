import type { Clock } from '../../clock.ts';
import {
  TEST_EVENT,
  type Webhook,
  type WebhookDelivery,
  type WebhookEvent,
  WEBHOOKS_PER_ACCOUNT,
  DELIVERIES_KEPT,
  PENDING_DELIVERIES_MAX,
} from '../../contract/webhooks.ts';
import type { Transactions } from '../../db/repos/index.ts';
import type { ItemsRepo } from '../../db/repos/items.ts';
import type { MembersRepo } from '../../db/repos/members.ts';
import type { UsersRepo } from '../../db/repos/users.ts';
import type { NewWebhookDelivery, WebhookDeliveryRow, WebhooksRepo, WebhookRow } from '../../db/repos/webhooks.ts';
import { AppError, badRequest, forbidden, Messages, notFound } from '../../errors.ts';
import { Jobs } from '../../jobs/catalog.ts';
import type { JobQueue } from '../../jobs/queue.ts';
import { RetryLaterError } from '../../jobs/registry.ts';
import { newId } from '../../lib/ids.ts';
import type { Logger } from '../../log.ts';
import type { Keyring } from '../../storage/keyring.ts';
import type { Principal } from '../identity/principal.ts';
import { iso } from '../files/item-views.ts';
import type { NotificationService } from '../sharing/members.ts';
import type { Tree } from '../files/tree.ts';
import type { ChangeRow } from '../../db/repos/changes.ts';
import type { ChangeLog } from '../changes/change-log.ts';
import { type Destinations, parseHookUrl } from './destination.ts';
import { newSecret, type WebhookSender } from './sender.ts';

const HOUR = 3600_000;
/** Retries stop, and a hook failing this long is disabled (Standard Webhooks' usual window). */
const RETRY_WINDOW_MS = 24 * HOUR;
const FIRST_RETRY_MS = 30_000;
const MAX_RETRY_MS = 4 * HOUR;
/** Change-log rows read per dispatcher round. */
const DISPATCH_BATCH = 500;
const CURSOR = 'changes';
const PENDING_FULL = `not queued: ${PENDING_DELIVERIES_MAX.toLocaleString('en')} earlier deliveries of this webhook are still waiting to be sent (the receiver is down or slow); redeliver once they have gone`;

/** The wait before retry `attempt` (1: after the first failure): 30 s doubling up to 4 h. */
function retryDelay(attempt: number): number {
  return Math.min(FIRST_RETRY_MS * 2 ** Math.max(0, attempt - 1), MAX_RETRY_MS);
}

/** Whose hooks: an account's (its owner manages them) or the instance's (null: the admin's). */
export type HookScope = { accountId: string | null };

interface WebhookDeps {
  clock: Clock;
  log: Logger;
  repo: WebhooksRepo;
  items: ItemsRepo;
  members: MembersRepo;
  users: Pick<UsersRepo, 'authUser'>;
  transactions: Transactions;
  keyring: Keyring;
  queue: JobQueue;
  tree: Tree;
  changes: Pick<ChangeLog, 'after' | 'latestSeq'>;
  notifications: NotificationService;
  destinations: Destinations;
  sender: WebhookSender;
}

const toWebhook = (r: WebhookRow): Webhook => ({
  id: r.id,
  url: r.url,
  events: JSON.parse(r.events) as WebhookEvent[],
  folderId: r.folderId,
  enabled: r.enabled,
  disabledReason: r.disabledReason,
  failingSince: r.failingSince === null ? null : iso(r.failingSince),
  createdAt: iso(r.createdAt),
  updatedAt: iso(r.updatedAt),
});

const toDelivery = (r: WebhookDeliveryRow): WebhookDelivery => ({
  id: r.id,
  messageId: r.messageId,
  type: r.type,
  status: r.status,
  attempts: r.attempts,
  responseStatus: r.responseStatus,
  durationMs: r.durationMs,
  response: r.responseExcerpt,
  error: r.error,
  createdAt: iso(r.createdAt),
  attemptedAt: r.attemptedAt === null ? null : iso(r.attemptedAt),
  nextAttemptAt: r.nextAttemptAt === null ? null : iso(r.nextAttemptAt),
});

/** The data of a change event: who did what to which item, before and after. */
function changeData(c: ChangeRow) {
  return {
    seq: c.seq,
    accountId: c.accountId,
    actor: { kind: c.actorKind, id: c.actorId },
    item: c.itemId === null ? null : { id: c.itemId, type: c.itemType },
    before: { name: c.nameBefore, parentId: c.parentBefore },
    after: { name: c.nameAfter, parentId: c.parentAfter },
    details: c.details === null ? null : (JSON.parse(c.details) as unknown),
  };
}

/**
 * Webhooks: hooks of an account or of the instance, their signed deliveries as durable jobs with retries
 * for 24 hours, the delivery log, and the dispatcher that turns change-log rows into deliveries.
 */
export class WebhookService {
  constructor(private readonly d: WebhookDeps) {}

  list(scope: HookScope): { webhooks: Webhook[] } {
    return { webhooks: this.d.repo.list(scope.accountId).map(toWebhook) };
  }

  get(scope: HookScope, id: string): { webhook: Webhook } {
    return { webhook: toWebhook(this.require(scope, id)) };
  }

  create(
    scope: HookScope,
    principal: Principal,
    input: { url: string; events: WebhookEvent[]; folderId?: string | null | undefined; enabled?: boolean | undefined },
  ): { webhook: Webhook; secret: string } {
    if (this.d.repo.count(scope.accountId) >= WEBHOOKS_PER_ACCOUNT) {
      throw new AppError(409, `There are already ${WEBHOOKS_PER_ACCOUNT} webhooks: delete one you no longer use first`);
    }
    const url = this.checkUrl(input.url);
    const folderId = this.checkFolder(scope, principal, input.folderId ?? null);
    const secret = newSecret();
    const now = this.d.clock.now();
    const row: WebhookRow = {
      id: newId(),
      accountId: scope.accountId,
      createdBy: principal.loginId,
      url,
      events: JSON.stringify([...new Set(input.events)]),
      folderId,
      enabled: input.enabled ?? true,
      secretSealed: this.d.keyring.sealSecret(secret),
      failingSince: null,
      disabledReason: null,
      createdAt: now,
      updatedAt: now,
    };
    this.d.repo.insert(row);
    return { webhook: toWebhook(row), secret };
  }

  update(
    scope: HookScope,
    principal: Principal,
    id: string,
    input: {
      url?: string | undefined;
      events?: WebhookEvent[] | undefined;
      folderId?: string | null | undefined;
      enabled?: boolean | undefined;
    },
  ): { webhook: Webhook } {
    const row = this.require(scope, id);
    const now = this.d.clock.now();
    const enabling = input.enabled === true && !row.enabled;
    this.d.repo.update(
      row.id,
      {
        url: input.url === undefined ? undefined : this.checkUrl(input.url),
        events: input.events === undefined ? undefined : JSON.stringify([...new Set(input.events)]),
        folderId: input.folderId === undefined ? undefined : this.checkFolder(scope, principal, input.folderId),
        enabled: input.enabled,
        // Enabled again by its owner: a fresh start, the 24-hour failure window included.
        ...(enabling ? { failingSince: null, disabledReason: null } : {}),
      },
      now,
    );
    if (input.enabled === false) return this.disable(scope, row.id);
    return { webhook: toWebhook(this.d.repo.byId(row.id)!) };
  }

  remove(scope: HookScope, id: string): { message: string } {
    if (!this.d.repo.delete(scope.accountId, id)) throw notFound(Messages.webhookNotFound);
    return { message: 'Webhook deleted' };
  }

  /** A new secret, shown this once; the old one stops signing at once. */
  rotateSecret(scope: HookScope, id: string): { webhook: Webhook; secret: string } {
    const row = this.require(scope, id);
    const secret = newSecret();
    this.d.repo.update(row.id, { secretSealed: this.d.keyring.sealSecret(secret) }, this.d.clock.now());
    return { webhook: toWebhook(this.d.repo.byId(row.id)!), secret };
  }

  deliveries(scope: HookScope, id: string): { deliveries: WebhookDelivery[] } {
    const row = this.require(scope, id);
    return { deliveries: this.d.repo.deliveries(row.id, DELIVERIES_KEPT).map(toDelivery) };
  }

  /** "Send test event": a `webhook.test` message, whatever events the hook asked for (a disabled one too). */
  sendTest(scope: HookScope, id: string): { delivery: WebhookDelivery } {
    const row = this.require(scope, id);
    const now = this.d.clock.now();
    const delivery = this.d.transactions.immediate(() =>
      this.enqueue(row, { type: TEST_EVENT, data: { webhookId: row.id, message: 'A test event from Coffer' }, changeSeq: null, at: now }),
    );
    return { delivery: toDelivery(this.d.repo.delivery(delivery)!) };
  }

  /** "Redeliver": the same message (same webhook-id and body) sent again as a new delivery. */
  redeliver(scope: HookScope, id: string, deliveryId: string): { delivery: WebhookDelivery } {
    const row = this.require(scope, id);
    const original = this.d.repo.delivery(deliveryId);
    if (!original || original.webhookId !== row.id) throw notFound(Messages.webhookDeliveryNotFound);
    if (this.pendingFull(row.id)) throw new AppError(429, PENDING_FULL);
    const now = this.d.clock.now();
    const newDelivery = newId();
    this.d.transactions.immediate(() => {
      this.d.repo.insertDelivery({ ...original, id: newDelivery, changeSeq: null, createdAt: now });
      this.d.repo.trimDeliveries(row.id, DELIVERIES_KEPT);
      this.d.queue.insert(Jobs.webhookDeliver, { deliveryId: newDelivery });
    });
    return { delivery: toDelivery(this.d.repo.delivery(newDelivery)!) };
  }

  /** The CLI's view: every hook, an account's or the instance's. */
  all(): Array<Webhook & { accountId: string | null }> {
    return this.d.repo.all().map((r) => ({ ...toWebhook(r), accountId: r.accountId }));
  }

  /** The CLI's `disable` and `test`: a hook found by id alone (the host's admin runs the CLI). */
  scopeOf(id: string): HookScope {
    const row = this.d.repo.byId(id);
    if (!row) throw notFound(Messages.webhookNotFound);
    return { accountId: row.accountId };
  }

  /** Stops sending to a hook; what it still had pending is failed. */
  disable(scope: HookScope, id: string): { webhook: Webhook } {
    const row = this.require(scope, id);
    const now = this.d.clock.now();
    this.d.repo.update(row.id, { enabled: false }, now);
    this.d.repo.failPending(row.id, 'the webhook was disabled', now);
    return { webhook: toWebhook(this.d.repo.byId(row.id)!) };
  }

  /**
   * An event raised where it happens (a sign-in, a link opened, a failed backup): one delivery to each
   * enabled hook of the account that asked for it, and to each such instance hook. `itemId` is what the
   * folder filter looks at; events without one pass it.
   */
  emit(accountId: string | null, type: WebhookEvent, data: unknown, itemId: string | null = null): void {
    const now = this.d.clock.now();
    const hooks = this.sendable()
      .filter((h) => (h.accountId === null || h.accountId === accountId) && this.wants(h, type))
      .filter((h) => h.folderId === null || itemId === null || this.d.tree.isInside(new Set([h.folderId]), itemId));
    if (hooks.length === 0) return;
    this.d.transactions.immediate(() => {
      for (const hook of hooks) this.enqueue(hook, { type, data, changeSeq: null, at: now });
    });
  }

  /**
   * One dispatcher round: change-log rows after the stored cursor become deliveries to the hooks that
   * match them, and the cursor moves, in one transaction (a restart neither loses nor repeats one).
   * Returns how many rows were read.
   */
  dispatch(): number {
    // From the start of the log the first time: older rows predate every hook (`matches` skips them).
    const cursor = this.d.repo.cursor(CURSOR) ?? 0;
    // Read before the hooks, as the rows are: a hook made after this reading is newer than every row up to it.
    const latest = this.d.changes.latestSeq();
    if (latest <= cursor) return 0;
    const hooks = this.sendable();
    // No hook can match a row: the cursor passes them all unread (each upload's row was read and matched here).
    if (hooks.length === 0) {
      this.d.transactions.immediate(() => this.d.repo.setCursor(CURSOR, latest));
      return 0;
    }
    const rows = this.d.changes.after(cursor, DISPATCH_BATCH);
    if (rows.length === 0) return 0;
    const matches = rows.map((change) => ({ change, hooks: hooks.filter((h) => this.matches(h, change)) }));
    this.d.transactions.immediate(() => {
      const waiting = new Map<string, number>();
      for (const { change, hooks: matched } of matches) {
        for (const hook of matched)
          this.enqueue(hook, { type: change.kind, data: changeData(change), changeSeq: change.seq, at: change.at }, waiting);
      }
      this.d.repo.setCursor(CURSOR, rows.at(-1)!.seq);
    });
    return rows.length;
  }

  /**
   * The `webhook.deliver` job: one attempt. A failure inside the 24-hour window asks to run again after
   * the backoff; a hook failing for 24 hours is disabled and its owner told.
   */
  async deliver(deliveryId: string, signal: AbortSignal): Promise<{ status: string }> {
    const delivery = this.d.repo.delivery(deliveryId);
    if (!delivery || delivery.status !== 'pending') return { status: 'gone' };
    const hook = this.d.repo.byId(delivery.webhookId);
    if (!hook) return { status: 'gone' };
    const started = this.d.clock.now();
    const refused = !hook.enabled ? 'the webhook is disabled' : !this.accountActive(hook) ? 'the account is disabled' : null;
    if (refused) {
      this.record(delivery, { ok: false, responseStatus: null, durationMs: 0, responseExcerpt: null, error: refused }, started, null);
      return { status: 'failed' };
    }
    const secret = this.d.keyring.openSecret(hook.secretSealed);
    const attempt = await this.d.sender.send(
      hook.url,
      { id: delivery.messageId, timestamp: Math.floor(started / 1000), body: delivery.body, secret },
      signal,
    );
    // Stopped by a shutdown: the worker runs the job again after the restart without counting this try.
    if (signal.aborted) throw signal.reason ?? new Error('stopping');
    const now = this.d.clock.now();
    if (attempt.ok) {
      this.record(delivery, attempt, now, null);
      if (hook.failingSince !== null) this.d.repo.update(hook.id, { failingSince: null }, now);
      return { status: 'succeeded' };
    }
    const failingSince = this.d.repo.markFailing(hook.id, now);
    // Deleted while the attempt was under way: its deliveries went with it.
    if (failingSince === null) return { status: 'gone' };
    if (now - failingSince >= RETRY_WINDOW_MS) {
      this.record(delivery, attempt, now, null);
      this.disableAfterFailures(hook, now);
      return { status: 'failed' };
    }
    const retryAt = now + retryDelay(delivery.attempts + 1);
    if (retryAt - delivery.createdAt > RETRY_WINDOW_MS) {
      this.record(delivery, attempt, now, null);
      return { status: 'failed' };
    }
    this.record(delivery, attempt, now, retryAt);
    throw new RetryLaterError(retryAt - now, attempt.error ?? 'delivery failed');
  }

  private record(delivery: WebhookDeliveryRow, attempt: Awaited<ReturnType<WebhookSender['send']>>, at: number, retryAt: number | null) {
    this.d.repo.recordAttempt(delivery.id, {
      status: attempt.ok ? 'succeeded' : retryAt === null ? 'failed' : 'pending',
      responseStatus: attempt.responseStatus,
      durationMs: attempt.durationMs,
      responseExcerpt: attempt.responseExcerpt,
      error: attempt.error,
      at,
      nextAttemptAt: retryAt,
    });
  }

  private disableAfterFailures(hook: WebhookRow, now: number): void {
    const reason = 'Disabled after failing for 24 hours';
    this.d.repo.update(hook.id, { enabled: false, disabledReason: reason }, now);
    this.d.repo.failPending(hook.id, 'the webhook was disabled after failing for 24 hours', now);
    const recipient = hook.accountId ?? hook.createdBy;
    if (recipient)
      this.d.notifications.notify(recipient, 'webhook.disabled', `Webhook to ${hook.url} was disabled: it failed for 24 hours.`, null);
    this.d.log.warn('webhook disabled', { webhookId: hook.id, accountId: hook.accountId });
  }

  /**
   * Adds a delivery and its job (inside the caller's transaction); the delivery's id. `waiting`, the hooks' pending
   * counts met so far in this transaction: a dispatch round counts each hook's once, not at every change (a count
   * reads up to PENDING_DELIVERIES_MAX rows, 1.2–1.5 ms at the cap).
   */
  private enqueue(
    hook: WebhookRow,
    e: { type: string; data: unknown; changeSeq: number | null; at: number },
    waiting = new Map<string, number>(),
  ): string {
    const delivery: NewWebhookDelivery = {
      id: newId(),
      webhookId: hook.id,
      messageId: `msg_${newId()}`,
      type: e.type,
      body: JSON.stringify({ type: e.type, timestamp: iso(e.at), data: e.data }),
      changeSeq: e.changeSeq,
      createdAt: this.d.clock.now(),
    };
    const pending = waiting.get(hook.id) ?? this.d.repo.pendingDeliveries(hook.id, PENDING_DELIVERIES_MAX);
    const full = pending >= PENDING_DELIVERIES_MAX;
    const added = this.d.repo.insertDelivery(delivery);
    waiting.set(hook.id, added && !full ? pending + 1 : pending);
    if (!added) return delivery.id;
    if (full) this.d.repo.failDelivery(delivery.id, PENDING_FULL, delivery.createdAt);
    this.d.repo.trimDeliveries(hook.id, DELIVERIES_KEPT);
    if (!full) this.d.queue.insert(Jobs.webhookDeliver, { deliveryId: delivery.id });
    return delivery.id;
  }

  /** Whether the hook already holds PENDING_DELIVERIES_MAX deliveries waiting to be sent. */
  private pendingFull(webhookId: string): boolean {
    return this.d.repo.pendingDeliveries(webhookId, PENDING_DELIVERIES_MAX) >= PENDING_DELIVERIES_MAX;
  }

  /** The hooks events go to: enabled, and the instance's or of an account that is not disabled (deletion disables it first). */
  private sendable(): WebhookRow[] {
    return this.d.repo.enabled().filter((h) => this.accountActive(h));
  }

  private accountActive(hook: WebhookRow): boolean {
    if (hook.accountId === null) return true;
    const owner = this.d.users.authUser(hook.accountId);
    return owner !== null && owner.disabledAt === null;
  }

  private wants(hook: WebhookRow, type: string): boolean {
    return (JSON.parse(hook.events) as string[]).includes(type);
  }

  /** Whether a change goes to a hook: its account's (an instance hook takes all), asked for, under its folder. */
  private matches(hook: WebhookRow, c: ChangeRow): boolean {
    if (hook.accountId !== null && hook.accountId !== c.accountId) return false;
    if (c.at < hook.createdAt || !this.wants(hook, c.kind)) return false;
    if (hook.folderId === null) return true;
    const folder = new Set([hook.folderId]);
    return (
      c.itemId === hook.folderId ||
      (c.parentAfter !== null && this.d.tree.isInside(folder, c.parentAfter)) ||
      (c.parentBefore !== null && this.d.tree.isInside(folder, c.parentBefore))
    );
  }

  private require(scope: HookScope, id: string): WebhookRow {
    const row = this.d.repo.get(scope.accountId, id);
    if (!row) throw notFound(Messages.webhookNotFound);
    return row;
  }

  private checkUrl(text: string): string {
    const url = parseHookUrl(text);
    this.d.destinations.checkLiteral(url);
    return url.href;
  }

  /**
   * The folder filter: a live folder of the account (a member of a folder shared with it gets 403: a
   * hook follows its own account's tree), or of any account for an instance hook.
   */
  private checkFolder(scope: HookScope, principal: Principal, folderId: string | null): string | null {
    if (folderId === null) return null;
    if (scope.accountId === null) {
      const owner = this.d.members.accountOf(folderId);
      const row = owner === null ? null : this.d.items.getLive(owner, folderId);
      if (!row || row.type !== 'folder') throw notFound(Messages.folderNotFound);
      return row.id;
    }
    if (this.d.tree.actor(principal, { ids: [folderId] }, 'view').share) throw forbidden(Messages.webhookFolderNotOwn);
    const row = this.d.tree.requireFolder(principal, folderId);
    if (!row) throw badRequest('folderId names no folder');
    return row.id;
  }
}
