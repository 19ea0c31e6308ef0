import type { Database } from 'bun:sqlite';
import type { CoreContext } from '../context.ts';
import { addMasterKeyToSecrets } from '../data-dir.ts';
import { badRequest } from '../errors.ts';
import { newId } from '../lib/ids.ts';
import { KeyIntegrityError, KeyUnavailableError } from '../storage/keyring.ts';
import { AuditActions, type AuditService } from './audit.ts';

export interface RotateOptions {
  /** Rows re-wrapped per transaction (default 1000). */
  batchSize?: number;
  /** Stop after this many batches; the next run resumes (a way to spread the work). */
  maxBatches?: number;
  onProgress?: (p: { phase: 'items' | 'secrets'; done: number; total: number }) => void;
}

export interface RotateResult {
  rotationId: string;
  keyId: string;
  /** True when this run continued an interrupted rotation instead of starting one. */
  resumed: boolean;
  itemsRewrapped: number;
  secretsRewrapped: number;
  /** Wrapped values whose key is not in secrets.json or that fail authentication; left as they are. */
  unreadable: { count: number; itemIds: string[] };
  /** Every data key and secret is under the new key. */
  completed: boolean;
  remaining: number;
}

export interface KeyStatus {
  currentKeyId: string;
  keyIds: string[];
  items: Record<string, number>;
  pendingRotation: { id: string; toKeyId: string; startedAt: string } | null;
}

interface RotationRow {
  id: string;
  to_key_id: string;
  started_at: number;
}

const MAX_PASSES = 3;

function isUnreadable(err: unknown): boolean {
  return err instanceof KeyUnavailableError || err instanceof KeyIntegrityError;
}

/**
 * Master key rotation (`coffer keys rotate`). The new key goes into secrets.json first (the old one
 * stays in previousMasterKeys), then every item's wrapped data key and every sealed MFA secret is
 * re-wrapped in batches, each batch one transaction. Blobs are never touched: their data keys do not
 * change. Progress is the rows themselves (`key_id`), so an interrupted run resumes where it stopped.
 */
export class KeyService {
  private readonly sqlite: Database;

  constructor(
    private readonly ctx: CoreContext,
    private readonly audit: AuditService,
  ) {
    this.sqlite = ctx.db.$client;
  }

  status(): KeyStatus {
    const items: Record<string, number> = {};
    for (const r of this.sqlite
      .query<{ key_id: string; n: number }, []>(`SELECT key_id, COUNT(*) AS n FROM items WHERE key_id IS NOT NULL GROUP BY key_id`)
      .all()) {
      items[r.key_id] = r.n;
    }
    const pending = this.pendingRotation();
    return {
      currentKeyId: this.ctx.keyring.current.id,
      keyIds: this.ctx.keyring.keys().map((k) => k.id),
      items,
      pendingRotation: pending
        ? { id: pending.id, toKeyId: pending.to_key_id, startedAt: new Date(pending.started_at).toISOString() }
        : null,
    };
  }

  async rotate(opts: RotateOptions = {}): Promise<RotateResult> {
    if (this.ctx.config.masterKey.source !== 'secrets') {
      throw badRequest(
        'The master key comes from COFFER_MASTER_KEY or COFFER_MASTER_KEY_FILE, which Coffer cannot rewrite: rotate it there, keeping the old key in secrets.json under previousMasterKeys',
      );
    }
    const batchSize = opts.batchSize ?? 1000;
    let rotation = this.pendingRotation();
    const resumed = rotation !== null && rotation.to_key_id === this.ctx.keyring.current.id;
    if (!resumed) {
      // A pending row for another key was superseded (secrets.json changed by hand): close it.
      if (rotation) this.sqlite.query('UPDATE key_rotations SET finished_at = ? WHERE id = ?').run(this.ctx.clock.now(), rotation.id);
      const previous = this.ctx.keyring.keys();
      const fresh = addMasterKeyToSecrets(this.ctx.paths);
      this.ctx.keyring.install(fresh, previous);
      rotation = { id: newId(), to_key_id: fresh.id, started_at: this.ctx.clock.now() };
      this.sqlite
        .query('INSERT INTO key_rotations (id, to_key_id, started_at) VALUES (?, ?, ?)')
        .run(rotation.id, rotation.to_key_id, rotation.started_at);
    }
    const keyId = rotation!.to_key_id;
    const result: RotateResult = {
      rotationId: rotation!.id,
      keyId,
      resumed,
      itemsRewrapped: 0,
      secretsRewrapped: 0,
      unreadable: { count: 0, itemIds: [] },
      completed: false,
      remaining: 0,
    };
    const budget = { batches: opts.maxBatches ?? Infinity };

    // Rows written beside us (the server wraps new files) are caught by a further pass.
    for (let pass = 0; pass < MAX_PASSES && budget.batches > 0; pass++) {
      // Each pass meets the unreadable values again; count them once, in the last pass.
      result.unreadable = { count: 0, itemIds: [] };
      if (!this.rewrapItems(keyId, batchSize, budget, result, opts)) break;
      if (!this.rewrapSecrets(keyId, batchSize, budget, result, opts)) break;
      if (this.remaining(keyId) - result.unreadable.count <= 0) break;
    }
    result.remaining = this.remaining(keyId);
    result.completed = result.remaining === 0;
    if (result.completed) {
      this.sqlite.query('UPDATE key_rotations SET finished_at = ? WHERE id = ?').run(this.ctx.clock.now(), result.rotationId);
    }
    this.audit.record({
      action: AuditActions.keysRotate,
      actor: 'cli',
      status: result.completed ? 'success' : 'failure',
      targetType: 'master_key',
      targetId: keyId,
      details: {
        resumed,
        itemsRewrapped: result.itemsRewrapped,
        secretsRewrapped: result.secretsRewrapped,
        unreadable: result.unreadable.count,
        remaining: result.remaining,
      },
    });
    return result;
  }

  /** Wrapped values not yet under `keyId`. */
  remaining(keyId: string): number {
    return this.itemsNotUnder(keyId) + this.secretsNotUnder(keyId);
  }

  private itemsNotUnder(keyId: string): number {
    return this.sqlite
      .query<{ n: number }, [string]>(`SELECT COUNT(*) AS n FROM items WHERE wrapped_key IS NOT NULL AND (key_id IS NULL OR key_id != ?)`)
      .get(keyId)!.n;
  }

  private secretsNotUnder(keyId: string): number {
    return this.sqlite
      .query<{ n: number }, [string]>(
        `SELECT COUNT(*) AS n FROM users WHERE (mfa_secret IS NOT NULL AND mfa_secret NOT LIKE ?1) OR (mfa_pending_secret IS NOT NULL AND mfa_pending_secret NOT LIKE ?1)`,
      )
      .get(`k1.${keyId}.%`)!.n;
  }

  private pendingRotation(): RotationRow | null {
    return (
      this.sqlite
        .query<RotationRow, []>(
          'SELECT id, to_key_id, started_at FROM key_rotations WHERE finished_at IS NULL ORDER BY started_at DESC LIMIT 1',
        )
        .get() ?? null
    );
  }

  /** Returns false when the batch budget ran out. */
  private rewrapItems(keyId: string, batchSize: number, budget: { batches: number }, result: RotateResult, opts: RotateOptions): boolean {
    const total = this.itemsNotUnder(keyId);
    const page = this.sqlite.query<{ id: string; wrapped_key: string }, [string, string, number]>(
      `SELECT id, wrapped_key FROM items WHERE id > ? AND wrapped_key IS NOT NULL AND (key_id IS NULL OR key_id != ?) ORDER BY id LIMIT ?`,
    );
    const update = this.sqlite.query('UPDATE items SET wrapped_key = ?, key_id = ? WHERE id = ? AND wrapped_key = ?');
    const progress = this.sqlite.query('UPDATE key_rotations SET items_rewrapped = items_rewrapped + ? WHERE id = ?');
    const keyring = this.ctx.keyring;
    let after = '';
    let done = 0;
    for (;;) {
      if (budget.batches <= 0) return false;
      const rows = page.all(after, keyId, batchSize);
      if (rows.length === 0) return true;
      after = rows.at(-1)!.id;
      const n = this.sqlite
        .transaction(() => {
          let changed = 0;
          for (const row of rows) {
            let wrapped: string;
            try {
              wrapped = keyring.rewrap(row.wrapped_key);
            } catch (err) {
              if (!isUnreadable(err)) throw err;
              result.unreadable.count++;
              if (result.unreadable.itemIds.length < 100) result.unreadable.itemIds.push(row.id);
              continue;
            }
            changed += update.run(wrapped, keyId, row.id, row.wrapped_key).changes;
          }
          progress.run(changed, result.rotationId);
          return changed;
        })
        .immediate();
      result.itemsRewrapped += n;
      done += rows.length;
      budget.batches--;
      opts.onProgress?.({ phase: 'items', done, total });
    }
  }

  private rewrapSecrets(keyId: string, batchSize: number, budget: { batches: number }, result: RotateResult, opts: RotateOptions): boolean {
    const pattern = `k1.${keyId}.%`;
    const total = this.secretsNotUnder(keyId);
    const page = this.sqlite.query<{ id: string; mfa_secret: string | null; mfa_pending_secret: string | null }, [string, string, number]>(
      `SELECT id, mfa_secret, mfa_pending_secret FROM users
       WHERE id > ?1 AND ((mfa_secret IS NOT NULL AND mfa_secret NOT LIKE ?2) OR (mfa_pending_secret IS NOT NULL AND mfa_pending_secret NOT LIKE ?2))
       ORDER BY id LIMIT ?3`,
    );
    const update = this.sqlite.query(
      'UPDATE users SET mfa_secret = ?, mfa_pending_secret = ? WHERE id = ? AND mfa_secret IS ? AND mfa_pending_secret IS ?',
    );
    const progress = this.sqlite.query('UPDATE key_rotations SET secrets_rewrapped = secrets_rewrapped + ? WHERE id = ?');
    const keyring = this.ctx.keyring;
    const reseal = (sealed: string | null): string | null => {
      if (sealed === null || sealed.startsWith(`k1.${keyId}.`)) return sealed;
      return keyring.sealSecret(keyring.openSecret(sealed));
    };
    let after = '';
    let done = 0;
    for (;;) {
      if (budget.batches <= 0) return false;
      const rows = page.all(after, pattern, batchSize);
      if (rows.length === 0) return true;
      after = rows.at(-1)!.id;
      const n = this.sqlite
        .transaction(() => {
          let changed = 0;
          for (const row of rows) {
            let secret: string | null;
            let pending: string | null;
            try {
              secret = reseal(row.mfa_secret);
              pending = reseal(row.mfa_pending_secret);
            } catch (err) {
              if (!isUnreadable(err)) throw err;
              result.unreadable.count++;
              continue;
            }
            changed += update.run(secret, pending, row.id, row.mfa_secret, row.mfa_pending_secret).changes;
          }
          progress.run(changed, result.rotationId);
          return changed;
        })
        .immediate();
      result.secretsRewrapped += n;
      done += rows.length;
      budget.batches--;
      opts.onProgress?.({ phase: 'secrets', done, total });
    }
  }
}
