import { and, desc, isNull, eq, sql } from 'drizzle-orm';
import type { Db } from '../client.ts';
import { changesOf } from '../select.ts';
import { keyRotations } from '../schema/audit.ts';
import { users } from '../schema/users.ts';

export type KeyRotation = Pick<typeof keyRotations.$inferSelect, 'id' | 'toKeyId' | 'startedAt'>;
export type SealedSecrets = Pick<typeof users.$inferSelect, 'id' | 'mfaSecret' | 'mfaPendingSecret'>;

/** The SQL of master key rotation: `key_rotations`, the sealed MFA secrets of `users` and webhooks' signing secrets (items' keys: ItemsRepo). */
export class KeysRepo {
  constructor(private readonly db: Db) {}

  pendingRotation(): KeyRotation | null {
    return (
      this.db
        .select({ id: keyRotations.id, toKeyId: keyRotations.toKeyId, startedAt: keyRotations.startedAt })
        .from(keyRotations)
        .where(isNull(keyRotations.finishedAt))
        .orderBy(desc(keyRotations.startedAt))
        .limit(1)
        .get() ?? null
    );
  }

  startRotation(rotation: KeyRotation): void {
    this.db.insert(keyRotations).values(rotation).run();
  }

  finishRotation(id: string, at: number): void {
    this.db.update(keyRotations).set({ finishedAt: at }).where(eq(keyRotations.id, id)).run();
  }

  addProgress(id: string, items: number, secrets: number): void {
    this.db
      .update(keyRotations)
      .set({
        itemsRewrapped: sql`${keyRotations.itemsRewrapped} + ${items}`,
        secretsRewrapped: sql`${keyRotations.secretsRewrapped} + ${secrets}`,
      })
      .where(eq(keyRotations.id, id))
      .run();
  }

  /** Logins with a sealed secret not sealed under `keyId` (sealed values start `k1.<key id>.`). */
  countSecretsNotUnder(keyId: string): number {
    return (
      this.db.$client
        .query<{ n: number }, [string]>(
          `SELECT COUNT(*) AS n FROM users
          WHERE (mfa_secret IS NOT NULL AND mfa_secret NOT LIKE ?1) OR (mfa_pending_secret IS NOT NULL AND mfa_pending_secret NOT LIKE ?1)`,
        )
        .get(`k1.${keyId}.%`)!.n + this.countWebhookSecretsNotUnder(keyId)
    );
  }

  private countWebhookSecretsNotUnder(keyId: string): number {
    return this.db.$client
      .query<{ n: number }, [string]>('SELECT COUNT(*) AS n FROM webhooks WHERE secret_sealed NOT LIKE ?')
      .get(`k1.${keyId}.%`)!.n;
  }

  /** Webhooks whose signing secret is sealed under another key than `keyId`, by id. */
  webhookSecretsNotUnderPage(keyId: string, afterId: string, limit: number): Array<{ id: string; sealed: string }> {
    return this.db.$client
      .query<{ id: string; sealed: string }, [string, string, number]>(
        'SELECT id, secret_sealed AS sealed FROM webhooks WHERE id > ? AND secret_sealed NOT LIKE ? ORDER BY id LIMIT ?',
      )
      .all(afterId, `k1.${keyId}.%`, limit);
  }

  /** Compare-and-set of a re-sealed webhook secret: one rotated meanwhile is left alone. */
  resealWebhookSecret(id: string, from: string, to: string): number {
    return this.db.$client.query('UPDATE webhooks SET secret_sealed = ? WHERE id = ? AND secret_sealed = ?').run(to, id, from).changes;
  }

  secretsNotUnderPage(keyId: string, afterId: string, limit: number): SealedSecrets[] {
    return this.db.$client
      .query<SealedSecrets, [string, string, number]>(
        `SELECT id, mfa_secret AS mfaSecret, mfa_pending_secret AS mfaPendingSecret FROM users
         WHERE id > ?1 AND ((mfa_secret IS NOT NULL AND mfa_secret NOT LIKE ?2) OR (mfa_pending_secret IS NOT NULL
           AND mfa_pending_secret NOT LIKE ?2))
         ORDER BY id LIMIT ?3`,
      )
      .all(afterId, `k1.${keyId}.%`, limit);
  }

  /** Compare-and-set of re-sealed secrets: a row changed meanwhile is left alone. */
  resealSecrets(from: SealedSecrets, secret: string | null, pending: string | null): number {
    return changesOf(
      this.db
        .update(users)
        .set({ mfaSecret: secret, mfaPendingSecret: pending })
        .where(
          and(
            eq(users.id, from.id),
            from.mfaSecret === null ? isNull(users.mfaSecret) : eq(users.mfaSecret, from.mfaSecret),
            from.mfaPendingSecret === null ? isNull(users.mfaPendingSecret) : eq(users.mfaPendingSecret, from.mfaPendingSecret),
          ),
        )
        .run(),
    );
  }
}
