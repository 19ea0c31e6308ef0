import type { AppContext } from '../context.ts';
import { newWebhookBody, webhookPatchBody } from '../contract/webhooks.ts';
import type { Principal } from '../services/identity/principal.ts';
import type { HookScope } from '../services/webhooks/webhooks.ts';
import { route, routes } from './route.ts';

const own = (principal: Principal): HookScope => ({ accountId: principal.accountId });
const instance = (): HookScope => ({ accountId: null });

/** Webhooks (issue 43): an account's under /api/webhooks (its owner), the instance's under /api/admin/webhooks (the admin). */
export function webhookRoutes(ctx: AppContext) {
  const { webhooks } = ctx.services;
  return routes([
    route('GET /api/webhooks', { handler: ({ principal }) => webhooks.list(own(principal)) }),
    route('POST /api/webhooks', {
      summary: 'Creates a webhook; its secret (whsec_…) is in this answer only',
      body: newWebhookBody,
      handler: ({ principal, body, set }) => {
        set.status = 201;
        return webhooks.create(own(principal), principal, body);
      },
    }),
    route('GET /api/webhooks/:id', { handler: ({ principal, params }) => webhooks.get(own(principal), params.id) }),
    route('PATCH /api/webhooks/:id', {
      body: webhookPatchBody,
      handler: ({ principal, params, body }) => webhooks.update(own(principal), principal, params.id, body),
    }),
    route('DELETE /api/webhooks/:id', { handler: ({ principal, params }) => webhooks.remove(own(principal), params.id) }),
    route('POST /api/webhooks/:id/rotate-secret', {
      summary: 'A new secret, in this answer only; the old one stops signing at once',
      handler: ({ principal, params }) => webhooks.rotateSecret(own(principal), params.id),
    }),
    route('GET /api/webhooks/:id/deliveries', {
      summary: 'The newest 100 deliveries: time, status, duration and the first 1 KiB of the response',
      handler: ({ principal, params }) => webhooks.deliveries(own(principal), params.id),
    }),
    route('POST /api/webhooks/:id/test', {
      summary: 'Sends a webhook.test event',
      handler: ({ principal, params, set }) => {
        set.status = 202;
        return webhooks.sendTest(own(principal), params.id);
      },
    }),
    route('POST /api/webhooks/:id/deliveries/:deliveryId/redeliver', {
      summary: 'Sends a delivered message again (same webhook-id and body)',
      handler: ({ principal, params, set }) => {
        set.status = 202;
        return webhooks.redeliver(own(principal), params.id, params.deliveryId);
      },
    }),

    route('GET /api/admin/webhooks', { handler: () => webhooks.list(instance()) }),
    route('POST /api/admin/webhooks', {
      summary: "Creates an instance webhook (every account's changes); its secret is in this answer only",
      body: newWebhookBody,
      handler: ({ principal, body, set }) => {
        set.status = 201;
        return webhooks.create(instance(), principal, body);
      },
    }),
    route('GET /api/admin/webhooks/:id', { handler: ({ params }) => webhooks.get(instance(), params.id) }),
    route('PATCH /api/admin/webhooks/:id', {
      body: webhookPatchBody,
      handler: ({ principal, params, body }) => webhooks.update(instance(), principal, params.id, body),
    }),
    route('DELETE /api/admin/webhooks/:id', { handler: ({ params }) => webhooks.remove(instance(), params.id) }),
    route('POST /api/admin/webhooks/:id/rotate-secret', { handler: ({ params }) => webhooks.rotateSecret(instance(), params.id) }),
    route('GET /api/admin/webhooks/:id/deliveries', { handler: ({ params }) => webhooks.deliveries(instance(), params.id) }),
    route('POST /api/admin/webhooks/:id/test', {
      handler: ({ params, set }) => {
        set.status = 202;
        return webhooks.sendTest(instance(), params.id);
      },
    }),
    route('POST /api/admin/webhooks/:id/deliveries/:deliveryId/redeliver', {
      handler: ({ params, set }) => {
        set.status = 202;
        return webhooks.redeliver(instance(), params.id, params.deliveryId);
      },
    }),
  ]);
}
