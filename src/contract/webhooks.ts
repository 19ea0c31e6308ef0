import { z } from 'zod';
import { built, lazySchema } from './lazy-schema.ts';

/** Change-log kinds a hook may ask for (issue 43's change log). */
export const CHANGE_EVENTS = [
  'item.created',
  'item.uploaded',
  'item.replaced',
  'item.renamed',
  'item.moved',
  'item.trashed',
  'item.restored',
  'item.purged',
  'item.copied',
  'item.version_restored',
  'link.created',
  'link.removed',
  'member.added',
  'member.removed',
  'item.dropped',
  'item.touched',
] as const;

/** Events raised where they happen rather than from the change log. */
export const OTHER_EVENTS = ['share.link_opened', 'account.signed_in', 'backup.failed'] as const;

const WEBHOOK_EVENTS = [...CHANGE_EVENTS, ...OTHER_EVENTS] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** The type of the message "Send test event" sends, whatever the hook asked for. */
export const TEST_EVENT = 'webhook.test';

/** Longest hook URL accepted. */
const WEBHOOK_URL_MAX = 2000;
/** Hooks per account, and for the instance. */
export const WEBHOOKS_PER_ACCOUNT = 20;
/** Deliveries kept per hook, newest first. */
export const DELIVERIES_KEPT = 100;
/** Deliveries of one hook waiting to be sent, at most: past it a new one is refused (failed at once, with the reason), so a receiver down for a day on a busy instance cannot pile up millions of rows. */
export const PENDING_DELIVERIES_MAX = 10_000;

const url = lazySchema(() =>
  z
    .string({ error: 'url is required' })
    .trim()
    .min(1, 'url is required')
    .max(WEBHOOK_URL_MAX, `url is at most ${WEBHOOK_URL_MAX} characters`),
);
const events = lazySchema(() =>
  z
    .array(z.enum(WEBHOOK_EVENTS, { error: `events are among: ${WEBHOOK_EVENTS.join(', ')}` }))
    .min(1, 'choose at least one event')
    .max(WEBHOOK_EVENTS.length),
);
const folderId = lazySchema(() => z.string().min(1).max(100).nullable());

export const newWebhookBody = lazySchema(() =>
  z.object({
    url: built(url),
    events: built(events),
    folderId: folderId.optional(),
    enabled: z.boolean().optional(),
  }),
);

export const webhookPatchBody = lazySchema(() =>
  z.object({
    url: url.optional(),
    events: events.optional(),
    folderId: folderId.optional(),
    enabled: z.boolean().optional(),
  }),
);

/** A hook as its owner sees it: never its secret, which is shown once (create, rotate). */
export interface Webhook {
  id: string;
  url: string;
  events: WebhookEvent[];
  folderId: string | null;
  enabled: boolean;
  /** Why the server disabled it (failing for 24 hours), until it is enabled again. */
  disabledReason: string | null;
  failingSince: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface WebhookWithSecret {
  webhook: Webhook;
  /** `whsec_` and base64: shown this once. */
  secret: string;
}

export interface WebhookDelivery {
  id: string;
  messageId: string;
  type: string;
  status: 'pending' | 'succeeded' | 'failed';
  attempts: number;
  responseStatus: number | null;
  durationMs: number | null;
  /** The first 1 KiB of the response body. */
  response: string | null;
  error: string | null;
  createdAt: string;
  attemptedAt: string | null;
  nextAttemptAt: string | null;
}
