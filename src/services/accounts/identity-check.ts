import type { Clock } from '../../clock.ts';
import type { SessionsRepo } from '../../db/repos/sessions.ts';
import type { UsersRepo } from '../../db/repos/users.ts';
import { badRequest, Messages, unauthorized } from '../../errors.ts';
import type { Actor, AuditAction, AuditService } from '../admin/audit.ts';
import { verifyPassword } from '../identity/passwords.ts';
import type { Principal } from '../identity/principal.ts';
import type { MfaService } from './mfa.ts';
import type { PasswordTries } from './password-tries.ts';

/** What a login gives to prove it is itself again: its password, or a code of its second factor. */
export type Confirmation = { password?: string; code?: string } | null | undefined;

/** Who acts on other accounts: a signed-in admin with what it gave to confirm, or the command line, which asks nothing. */
export type ConfirmedActor = { principal: Principal; proof: Confirmation } | 'cli';

/** A session signed in this recently confirms its login on its own: a cookie stolen later is older than that. */
const RECENT_SIGN_IN_MS = 10 * 60_000;

/** What the check is for: the audited action of a refusal, and the messages that say what to enter. */
export interface ConfirmationPurpose {
  action: AuditAction;
  /** Whether a session signed in within RECENT_SIGN_IN_MS is proof enough. */
  recentSignIn: boolean;
  passwordNeeded: string;
  codeNeeded: string;
  noProof: string;
}

/**
 * Asks a signed-in login to prove it is itself before it makes a credential that outlives its session (a passkey,
 * an app password): the password when it has one, else a code of its second factor. A refusal is 400 saying which
 * is needed, with `confirm` naming it for clients (`password` or `code`), and a wrong one is audited.
 */
export class IdentityCheck {
  constructor(
    private readonly d: {
      clock: Clock;
      users: UsersRepo;
      sessions: SessionsRepo;
      mfa: MfaService;
      passwordTries: PasswordTries;
      audit: AuditService;
    },
  ) {}

  async confirm(principal: Principal, proof: Confirmation, purpose: ConfirmationPurpose): Promise<void> {
    const login = this.d.users.byId(principal.loginId);
    if (!login) throw unauthorized(Messages.sessionRevoked);
    const refuse = (reason: string, message: string): never => {
      this.d.audit.record({
        action: purpose.action,
        status: 'failure',
        principal,
        targetType: 'user',
        targetId: login.id,
        details: { reason },
      });
      throw badRequest(message);
    };
    if (login.passwordHash && proof?.password) {
      const hash = login.passwordHash;
      if (!(await this.d.passwordTries.check(login.email, () => verifyPassword(proof.password!, hash))))
        refuse('wrong_password', Messages.wrongCurrentPassword);
      return this.stillSignedIn(principal);
    }
    if (login.mfaEnabled && proof?.code) {
      // A code confirms only a session older than its factor: a stolen session that turns two-factor on, or makes new backup
      // codes, must not then prove itself with them (and so make a passkey or app password that outlives it).
      const signedInAt = this.d.sessions.startedAt(principal.sessionId, principal.loginId);
      if (signedInAt === null) throw unauthorized(Messages.sessionRevoked);
      if (this.d.mfa.issuedAt(login.id, proof.code) > signedInAt) refuse('mfa_newer_than_session', Messages.mfaNewerThanSession);
      if (!(await this.d.mfa.checkCode(login.id, proof.code))) refuse('invalid_mfa_code', Messages.invalidMfaCode);
      return this.stillSignedIn(principal);
    }
    if (purpose.recentSignIn) {
      const signedInAt = this.d.sessions.startedAt(principal.sessionId, principal.loginId);
      if (signedInAt !== null && this.d.clock.now() - signedInAt <= RECENT_SIGN_IN_MS) return;
    }
    if (login.passwordHash) throw badRequest(purpose.passwordNeeded, { confirm: 'password' });
    if (login.mfaEnabled) throw badRequest(purpose.codeNeeded, { confirm: 'code' });
    throw badRequest(purpose.noProof);
  }

  /** A password change, or any sign-out, while the proof was checked (behind other hashes) ends what the session asked for. */
  private stillSignedIn(principal: Principal): void {
    if (this.d.sessions.startedAt(principal.sessionId, principal.loginId) === null) throw unauthorized(Messages.sessionRevoked);
  }

  /** The actor, once a signed-in one has confirmed as `confirm` asks (the command line runs as the server's own user). */
  async actor(by: ConfirmedActor, purpose: ConfirmationPurpose): Promise<Actor> {
    if (by === 'cli') return 'cli';
    await this.confirm(by.principal, by.proof, purpose);
    return by.principal;
  }
}
