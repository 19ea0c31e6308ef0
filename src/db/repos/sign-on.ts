import { and, eq } from 'drizzle-orm';
import type { Db } from '../client.ts';
import { idpIdentities } from '../schema/sign-on.ts';

export type IdpIdentity = typeof idpIdentities.$inferSelect;

/** The SQL of single sign-on: which provider identity (issuer + subject) signs which login in. */
export class IdpRepo {
  constructor(private readonly db: Db) {}

  /** The login an identity is linked to, or null. */
  userOf(issuer: string, subject: string): string | null {
    return (
      this.db
        .select({ userId: idpIdentities.userId })
        .from(idpIdentities)
        .where(and(eq(idpIdentities.issuer, issuer), eq(idpIdentities.subject, subject)))
        .get()?.userId ?? null
    );
  }

  /** Whether the login already has an identity at this issuer (then no other may be linked by email). */
  hasIssuer(userId: string, issuer: string): boolean {
    return (
      this.db
        .select({ userId: idpIdentities.userId })
        .from(idpIdentities)
        .where(and(eq(idpIdentities.userId, userId), eq(idpIdentities.issuer, issuer)))
        .get() !== undefined
    );
  }

  link(row: Omit<IdpIdentity, 'lastSignInAt'>): void {
    this.db
      .insert(idpIdentities)
      .values({ ...row, lastSignInAt: row.createdAt })
      .run();
  }

  touch(issuer: string, subject: string, at: number): void {
    this.db
      .update(idpIdentities)
      .set({ lastSignInAt: at })
      .where(and(eq(idpIdentities.issuer, issuer), eq(idpIdentities.subject, subject)))
      .run();
  }
}
