import { and, count, eq, isNull, or, sql } from 'drizzle-orm';
import type { Db } from '../client.ts';
import { changesOf } from '../select.ts';
import { mfaBackupCodes, users } from '../schema/users.ts';

export type MfaState = Pick<
  typeof users.$inferSelect,
  'email' | 'mfaEnabled' | 'mfaSecret' | 'mfaPendingSecret' | 'mfaLastStep' | 'mfaEnabledAt' | 'backupCodesRegeneratedAt'
>;

/** The SQL of two-factor authentication: the MFA columns of `users` and `mfa_backup_codes`. */
export class MfaRepo {
  constructor(private readonly db: Db) {}

  state(userId: string): MfaState | null {
    return (
      this.db
        .select({
          email: users.email,
          mfaEnabled: users.mfaEnabled,
          mfaSecret: users.mfaSecret,
          mfaPendingSecret: users.mfaPendingSecret,
          mfaLastStep: users.mfaLastStep,
          mfaEnabledAt: users.mfaEnabledAt,
          backupCodesRegeneratedAt: users.backupCodesRegeneratedAt,
        })
        .from(users)
        .where(eq(users.id, userId))
        .get() ?? null
    );
  }

  setPendingSecret(userId: string, sealed: string, at: number): void {
    this.db.update(users).set({ mfaPendingSecret: sealed, updatedAt: at }).where(eq(users.id, userId)).run();
  }

  /** The pending secret becomes the secret, and the backup codes are replaced, in one transaction. */
  enable(userId: string, codeHashes: readonly string[], at: number): void {
    this.db.transaction((tx) => {
      tx.update(users)
        .set({ mfaEnabled: true, mfaSecret: sql`${users.mfaPendingSecret}`, mfaPendingSecret: null, mfaEnabledAt: at, updatedAt: at })
        .where(eq(users.id, userId))
        .run();
      this.replaceCodes(tx, userId, codeHashes);
    });
  }

  /** New backup codes and the time they were issued, in one transaction. */
  regenerateCodes(userId: string, codeHashes: readonly string[], at: number): void {
    this.db.transaction((tx) => {
      tx.update(users).set({ backupCodesRegeneratedAt: at }).where(eq(users.id, userId)).run();
      this.replaceCodes(tx, userId, codeHashes);
    });
  }

  reset(userId: string, at: number): void {
    this.db.transaction((tx) => {
      tx.update(users)
        .set({
          mfaEnabled: false,
          mfaSecret: null,
          mfaPendingSecret: null,
          mfaLastStep: null,
          mfaEnabledAt: null,
          backupCodesRegeneratedAt: null,
          updatedAt: at,
        })
        .where(eq(users.id, userId))
        .run();
      tx.delete(mfaBackupCodes).where(eq(mfaBackupCodes.userId, userId)).run();
    });
  }

  unusedCodeCount(userId: string): number {
    return this.db
      .select({ n: count() })
      .from(mfaBackupCodes)
      .where(and(eq(mfaBackupCodes.userId, userId), isNull(mfaBackupCodes.usedAt)))
      .get()!.n;
  }

  /** Spends an unused backup code; false when there is none with this hash. */
  spendCode(userId: string, codeHash: string, at: number): boolean {
    return (
      changesOf(
        this.db
          .update(mfaBackupCodes)
          .set({ usedAt: at })
          .where(and(eq(mfaBackupCodes.userId, userId), eq(mfaBackupCodes.codeHash, codeHash), isNull(mfaBackupCodes.usedAt)))
          .run(),
      ) === 1
    );
  }

  /** Compare-and-set of the last accepted TOTP step, so two requests racing with one code cannot both succeed. */
  acceptStep(userId: string, step: number): boolean {
    return (
      changesOf(
        this.db
          .update(users)
          .set({ mfaLastStep: step })
          .where(and(eq(users.id, userId), or(isNull(users.mfaLastStep), sql`${users.mfaLastStep} < ${step}`)))
          .run(),
      ) === 1
    );
  }

  private replaceCodes(tx: Pick<Db, 'delete' | 'insert'>, userId: string, codeHashes: readonly string[]): void {
    tx.delete(mfaBackupCodes).where(eq(mfaBackupCodes.userId, userId)).run();
    tx.insert(mfaBackupCodes)
      .values(codeHashes.map((codeHash) => ({ userId, codeHash })))
      .onConflictDoNothing()
      .run();
  }
}
