import type { CoreContext } from '../context.ts';

/** How long an expired share link keeps answering 410 (expired) before it is removed and answers 404. */
export const EXPIRED_LINK_KEEP_MS = 30 * 24 * 3600_000;

/** Clean-ups that belong to no single area's service yet. */
export class MaintenanceService {
  constructor(private readonly ctx: CoreContext) {}

  /** Removes share links that expired more than EXPIRED_LINK_KEEP_MS ago (their share_items go with them), in batches. */
  purgeExpiredShareLinks(batch = 500): number {
    const sqlite = this.ctx.db.$client;
    const cutoff = this.ctx.clock.now() - EXPIRED_LINK_KEEP_MS;
    let total = 0;
    for (;;) {
      const n = sqlite
        .query('DELETE FROM share_links WHERE id IN (SELECT id FROM share_links WHERE expires_at IS NOT NULL AND expires_at < ? LIMIT ?)')
        .run(cutoff, batch).changes;
      total += n;
      if (n < batch) return total;
    }
  }
}
