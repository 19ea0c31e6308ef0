import type { ApiBody } from '../../src/contract/api.ts';
import { call } from '../app/api.ts';

/** The account's webhooks (Settings → Webhooks, the owner's). */
export const webhooks = {
  list: () => call('GET /api/webhooks'),
  create: (body: ApiBody<'POST /api/webhooks'>) => call('POST /api/webhooks', { body }),
  update: (id: string, body: ApiBody<'PATCH /api/webhooks/:id'>) => call('PATCH /api/webhooks/:id', { params: { id }, body }),
  remove: (id: string) => call('DELETE /api/webhooks/:id', { params: { id } }),
  rotateSecret: (id: string) => call('POST /api/webhooks/:id/rotate-secret', { params: { id } }),
  deliveries: (id: string) => call('GET /api/webhooks/:id/deliveries', { params: { id } }),
  test: (id: string) => call('POST /api/webhooks/:id/test', { params: { id } }),
  redeliver: (id: string, deliveryId: string) =>
    call('POST /api/webhooks/:id/deliveries/:deliveryId/redeliver', { params: { id, deliveryId } }),
};

/** The instance's webhooks (Admin → Webhooks): every account's changes. */
export const instanceWebhooks: typeof webhooks = {
  list: () => call('GET /api/admin/webhooks'),
  create: (body) => call('POST /api/admin/webhooks', { body }),
  update: (id, body) => call('PATCH /api/admin/webhooks/:id', { params: { id }, body }),
  remove: (id) => call('DELETE /api/admin/webhooks/:id', { params: { id } }),
  rotateSecret: (id) => call('POST /api/admin/webhooks/:id/rotate-secret', { params: { id } }),
  deliveries: (id) => call('GET /api/admin/webhooks/:id/deliveries', { params: { id } }),
  test: (id) => call('POST /api/admin/webhooks/:id/test', { params: { id } }),
  redeliver: (id, deliveryId) => call('POST /api/admin/webhooks/:id/deliveries/:deliveryId/redeliver', { params: { id, deliveryId } }),
};
