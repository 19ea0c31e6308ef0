import type { Clock } from '../../clock.ts';
import type { Config } from '../../config.ts';
import type { DataPaths } from '../../data-dir.ts';
import { addMasterKeyToSecrets } from '../../storage/secrets-file.ts';
import type { Transactions } from '../../db/repos/index.ts';
import type { LibrariesRepo } from '../../db/repos/libraries.ts';
import type { ItemsRepo } from '../../db/repos/items.ts';
import type { KeysRepo } from '../../db/repos/keys.ts';
import { badRequest } from '../../errors.ts';
import { newId } from '../../lib/ids.ts';
import { KeyIntegrityError, type Keyring, KeyUnavailableError } from '../../storage/keyring.ts';
import { AuditActions, type AuditService } from '../admin/audit.ts';

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

const MAX_PASSES = 3;

function isUnreadable(err: unknown): boolean {
  return err instanceof KeyUnavailableError || err instanceof KeyIntegrityError;
}

export interface KeyDeps {
  config: Config;
  paths: DataPaths;
  clock: Clock;
  keyring: Keyring;
  transactions: Transactions;
  keys: KeysRepo;
  items: ItemsRepo;
  libraries: LibrariesRepo;
  audit: AuditService;
}

/** One page of values to re-wrap, and how to re-wrap one (false: unreadable, left as it is). */
interface RewrapPhase<R extends { id: string }> {
  name: 'items' | 'secrets';
  total: number;
  page(afterId: string, limit: number): R[];
  rewrap(row: R): number | false;
  counted(result: RotateResult, changed: number): void;
}

/**
 * Master key rotation (`coffer keys rotate`). The new key goes into secrets.json first (the old one
 * stays in previousMasterKeys), then every item's wrapped data key, every sealed MFA secret and webhook secret is
 * re-wrapped in batches, each batch one transaction. Blobs are never touched: their data keys do not
 * change. Progress is the rows themselves (`key_id`), so an interrupted run resumes where it stopped.
 */
export class KeyService {
  constructor(private readonly d: KeyDeps) {}

  status(): KeyStatus {
    const pending = this.d.keys.pendingRotation();
    return {
      currentKeyId: this.d.keyring.current.id,
      keyIds: this.d.keyring.keys().map((k) => k.id),
      items: this.d.items.countByKeyId(),
      pendingRotation: pending ? { id: pending.id, toKeyId: pending.toKeyId, startedAt: new Date(pending.startedAt).toISOString() } : null,
    };
  }

  async rotate(opts: RotateOptions = {}): Promise<RotateResult> {
    if (this.d.config.masterKey.source !== 'secrets') {
      throw badRequest(
        'The master key comes from COFFER_MASTER_KEY or COFFER_MASTER_KEY_FILE, which Coffer cannot rewrite: ' +
          'rotate it there, keeping the old key in secrets.json under previousMasterKeys',
      );
    }
    const batchSize = opts.batchSize ?? 1000;
    let rotation = this.d.keys.pendingRotation();
    const resumed = rotation !== null && rotation.toKeyId === this.d.keyring.current.id;
    if (!resumed) {
      // A pending row for another key was superseded (secrets.json changed by hand): close it.
      if (rotation) this.d.keys.finishRotation(rotation.id, this.d.clock.now());
      const previous = this.d.keyring.keys();
      const fresh = addMasterKeyToSecrets(this.d.paths);
      this.d.keyring.install(fresh, previous);
      rotation = { id: newId(), toKeyId: fresh.id, startedAt: this.d.clock.now() };
      this.d.keys.startRotation(rotation);
    }
    const keyId = rotation!.toKeyId;
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
      const unreadable = (id: string) => {
        if (result.unreadable.itemIds.length < 100) result.unreadable.itemIds.push(id);
      };
      if (!this.runPhase(this.wrappedKeysPhase(keyId, this.d.items, unreadable), batchSize, budget, result, opts)) break;
      if (!this.runPhase(this.wrappedKeysPhase(keyId, this.d.libraries), batchSize, budget, result, opts)) break;
      if (!this.runPhase(this.secretsPhase(keyId), batchSize, budget, result, opts)) break;
      if (!this.runPhase(this.webhookSecretsPhase(keyId), batchSize, budget, result, opts)) break;
      if (this.remaining(keyId) - result.unreadable.count <= 0) break;
    }
    result.remaining = this.remaining(keyId);
    result.completed = result.remaining === 0;
    if (result.completed) this.d.keys.finishRotation(result.rotationId, this.d.clock.now());
    this.d.audit.record({
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

  /** Master keys that wrap some file's data key but are in neither secrets.json nor the configured key, with their file counts. */
  missingKeys(): Array<{ keyId: string; files: number }> {
    return Object.entries(this.d.items.countByKeyId())
      .filter(([id]) => !this.d.keyring.has(id))
      .map(([keyId, files]) => ({ keyId, files }));
  }

  /** Wrapped values not yet under `keyId`. */
  remaining(keyId: string): number {
    return this.d.items.countNotUnderKey(keyId) + this.d.libraries.countNotUnderKey(keyId) + this.d.keys.countSecretsNotUnder(keyId);
  }

  /**
   * Data keys of one table wrapped again under `keyId`: the items' files, the libraries' thumbnails (counted
   * with the items'). One that cannot be opened is left as it is and told to `unreadable`.
   */
  private wrappedKeysPhase(
    keyId: string,
    table: {
      countNotUnderKey(keyId: string): number;
      notUnderKeyPage(keyId: string, afterId: string, limit: number): Array<{ id: string; wrappedKey: string }>;
      rewrap(id: string, from: string, to: string, keyId: string): number | boolean;
    },
    unreadable: (id: string) => void = () => {},
  ): RewrapPhase<{ id: string; wrappedKey: string }> {
    return {
      name: 'items',
      total: table.countNotUnderKey(keyId),
      page: (after, limit) => table.notUnderKeyPage(keyId, after, limit),
      rewrap: (row) => {
        let wrapped: string;
        try {
          wrapped = this.d.keyring.rewrap(row.wrappedKey);
        } catch (err) {
          if (!isUnreadable(err)) throw err;
          unreadable(row.id);
          return false;
        }
        return Number(table.rewrap(row.id, row.wrappedKey, wrapped, keyId));
      },
      counted: (r, changed) => {
        r.itemsRewrapped += changed;
        this.d.keys.addProgress(r.rotationId, changed, 0);
      },
    };
  }

  private secretsPhase(keyId: string): RewrapPhase<{ id: string; mfaSecret: string | null; mfaPendingSecret: string | null }> {
    const keyring = this.d.keyring;
    const reseal = (sealed: string | null): string | null =>
      sealed === null || sealed.startsWith(`k1.${keyId}.`) ? sealed : keyring.sealSecret(keyring.openSecret(sealed));
    return {
      name: 'secrets',
      total: this.d.keys.countSecretsNotUnder(keyId),
      page: (after, limit) => this.d.keys.secretsNotUnderPage(keyId, after, limit),
      rewrap: (row) => {
        let secret: string | null;
        let pending: string | null;
        try {
          secret = reseal(row.mfaSecret);
          pending = reseal(row.mfaPendingSecret);
        } catch (err) {
          if (!isUnreadable(err)) throw err;
          return false;
        }
        return this.d.keys.resealSecrets(row, secret, pending);
      },
      counted: (r, changed) => {
        r.secretsRewrapped += changed;
        this.d.keys.addProgress(r.rotationId, 0, changed);
      },
    };
  }

  private webhookSecretsPhase(keyId: string): RewrapPhase<{ id: string; sealed: string }> {
    const keyring = this.d.keyring;
    return {
      name: 'secrets',
      total: this.d.keys.countSecretsNotUnder(keyId),
      page: (after, limit) => this.d.keys.webhookSecretsNotUnderPage(keyId, after, limit),
      rewrap: (row) => {
        let sealed: string;
        try {
          sealed = keyring.sealSecret(keyring.openSecret(row.sealed));
        } catch (err) {
          if (!isUnreadable(err)) throw err;
          return false;
        }
        return this.d.keys.resealWebhookSecret(row.id, row.sealed, sealed);
      },
      counted: (r, changed) => {
        r.secretsRewrapped += changed;
        this.d.keys.addProgress(r.rotationId, 0, changed);
      },
    };
  }

  /** Re-wraps one phase's values in batches, each one transaction; false when the batch budget ran out. */
  private runPhase<R extends { id: string }>(
    phase: RewrapPhase<R>,
    batchSize: number,
    budget: { batches: number },
    result: RotateResult,
    opts: RotateOptions,
  ): boolean {
    let after = '';
    let done = 0;
    for (;;) {
      if (budget.batches <= 0) return false;
      const rows = phase.page(after, batchSize);
      if (rows.length === 0) return true;
      after = rows.at(-1)!.id;
      this.d.transactions.immediate(() => {
        let changed = 0;
        for (const row of rows) {
          const n = phase.rewrap(row);
          if (n === false) result.unreadable.count++;
          else changed += n;
        }
        phase.counted(result, changed);
      });
      done += rows.length;
      budget.batches--;
      opts.onProgress?.({ phase: phase.name, done, total: phase.total });
    }
  }
}
