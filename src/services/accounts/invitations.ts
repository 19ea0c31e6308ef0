import { createHash } from 'node:crypto';
import type { InvitationEntry, InvitationView } from '../../contract/admin.ts';
import type { PublicUser } from '../../contract/accounts.ts';
import type { Clock } from '../../clock.ts';
import type { Invitation, InvitationsRepo } from '../../db/repos/invitations.ts';
import type { User, UsersRepo } from '../../db/repos/users.ts';
import { AppError, conflict, Messages, notFound } from '../../errors.ts';
import { newId, newToken } from '../../lib/ids.ts';
import { type Actor, AuditActions, type AuditService, actorFields } from '../admin/audit.ts';
import { type AccountService, displayName, toPublicUser } from './accounts.ts';
import { emailKey } from './email.ts';
import type { ConfirmationPurpose, ConfirmedActor, IdentityCheck } from './identity-check.ts';
import type { RequestInfo, SessionService } from './sessions.ts';

/** How long an invitation link works. */
const INVITATION_DAYS = 7;
const DAY_MS = 86_400_000;

export interface InvitationDeps {
  clock: Clock;
  invitations: InvitationsRepo;
  users: UsersRepo;
  accounts: AccountService;
  sessions: SessionService;
  audit: AuditService;
  identity: IdentityCheck;
}

const confirmAdding = (action: ConfirmationPurpose['action']): ConfirmationPurpose => ({
  action,
  recentSignIn: true,
  passwordNeeded:
    'Enter your password to add an account: a new account signs in for as long as it exists, so Coffer checks it is you first.',
  codeNeeded:
    'Enter a code from your authenticator app, or a backup code, to add an account: a new account signs in for as long as it exists, so Coffer checks it is you first.',
  noProof: 'Sign out and sign in again, then add the account within 10 minutes: Coffer checks it is you first.',
});

/** The address the invitee opens: the token rides in the fragment, so it never reaches a server log or a Referer. */
export const invitationUrl = (origin: string, token: string) => `${origin}/invite#${token}`;

const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

const entry = (row: Invitation): InvitationEntry => ({
  id: row.id,
  email: row.email,
  name: row.name,
  storageLimit: row.storageLimit,
  createdAt: new Date(row.createdAt).toISOString(),
  expiresAt: new Date(row.expiresAt).toISOString(),
});

/**
 * Accounts the admin adds: a one-time link valid INVITATION_DAYS on which the invitee sets a password, or
 * (`addWithPassword`) the account at once. Whether public sign-up is open changes nothing about either.
 */
export class InvitationService {
  constructor(private readonly d: InvitationDeps) {}

  /** A new invitation and its token, which is shown this once: only its hash is kept. */
  async invite(
    input: { email: string; name?: string; storageLimit?: number | null },
    added: ConfirmedActor,
  ): Promise<{ invitation: InvitationEntry; token: string }> {
    const by = await this.d.identity.actor(added, confirmAdding(AuditActions.userInvite));
    const name = displayName(input.name ?? '');
    const key = emailKey(input.email);
    const now = this.d.clock.now();
    if (this.d.users.byEmailKey(key)) throw conflict(Messages.emailInUse);
    if (this.d.invitations.pendingFor(key, now)) throw conflict(Messages.invitationPending);
    const token = newToken(32);
    const row: Invitation = {
      id: newId(),
      tokenHash: hashToken(token),
      email: input.email.trim(),
      emailKey: key,
      name,
      storageLimit: input.storageLimit ?? null,
      createdBy: by === 'cli' ? null : by.loginId,
      createdAt: now,
      expiresAt: now + INVITATION_DAYS * DAY_MS,
      usedAt: null,
      userId: null,
    };
    this.d.invitations.insert(row);
    this.d.audit.record({
      action: AuditActions.userInvite,
      ...actorFields(by),
      targetType: 'invitation',
      targetId: row.id,
      details: { email: row.email, expiresAt: row.expiresAt },
    });
    return { invitation: entry(row), token };
  }

  /** The admin's "Add user" with a password: the account exists at once, with its storage limit. */
  async addWithPassword(
    input: { email: string; name?: string; storageLimit?: number | null; password: string },
    added: ConfirmedActor,
  ): Promise<{ user: PublicUser }> {
    const by = await this.d.identity.actor(added, confirmAdding(AuditActions.userCreate));
    const row = await this.d.accounts.createLogin(
      {
        email: input.email,
        password: input.password,
        name: input.name ?? '',
        emailTrusted: true,
        alongside: (created) => {
          if (input.storageLimit) this.d.users.setStorageLimit(created.id, input.storageLimit, created.createdAt);
        },
      },
      by,
    );
    return { user: toPublicUser(row) };
  }

  pending(): { invitations: InvitationEntry[] } {
    return { invitations: this.d.invitations.pending(this.d.clock.now()).map(entry) };
  }

  /** Withdraws an unused invitation; its link stops working at once. */
  revoke(id: string, by: Actor): { message: string } {
    if (!this.d.invitations.deleteUnused(id)) throw notFound(Messages.invitationNotFound);
    this.d.audit.record({ action: AuditActions.userInviteRevoke, ...actorFields(by), targetType: 'invitation', targetId: id });
    return { message: 'Invitation withdrawn' };
  }

  /** The invitation a token names, while it can still be accepted: 404 unknown, 410 used or expired. */
  private usable(token: string): Invitation {
    const row = this.d.invitations.byTokenHash(hashToken(token));
    const refused = this.refusal(row);
    if (refused) throw refused;
    return row!;
  }

  /** Why a link cannot be accepted (404 unknown or withdrawn, 410 used or expired); null while it can. */
  private refusal(row: Invitation | null): AppError | null {
    if (!row) return notFound(Messages.invitationNotFound);
    if (row.usedAt !== null) return new AppError(410, Messages.invitationUsed);
    if (row.expiresAt <= this.d.clock.now()) return new AppError(410, Messages.invitationExpired);
    return null;
  }

  view(token: string): InvitationView {
    const row = this.usable(token);
    return { email: row.email, name: row.name, expiresAt: new Date(row.expiresAt).toISOString() };
  }

  /** Creates the invited login with the password chosen, claims the invitation in the same transaction and signs in. */
  async accept(input: { token: string; password: string; name?: string }, info: RequestInfo): Promise<{ user: PublicUser; token: string }> {
    this.d.accounts.refuseWhenPasswordLoginDisabled();
    const invitation = this.usable(input.token);
    // A name with nothing visible in it is no name: the one the admin chose stays.
    const name = displayName(input.name ?? '') || invitation.name;
    const row = await this.createInvited(invitation, input.password, name);
    const { token } = await this.d.sessions.start(row.id, info);
    this.d.audit.record({
      action: AuditActions.userInviteAccept,
      loginId: row.id,
      accountId: row.id,
      email: row.email,
      ip: info.ip,
      requestId: info.requestId,
      actor: 'login',
      targetType: 'invitation',
      targetId: invitation.id,
    });
    return { user: toPublicUser(row), token };
  }

  private async createInvited(invitation: Invitation, password: string, name: string): Promise<User> {
    try {
      return await this.d.accounts.createLogin({
        email: invitation.email,
        password,
        name,
        // The admin chose the address the invitation is for.
        emailTrusted: true,
        alongside: (created) => {
          // Used by a racing acceptance, withdrawn or expired while the password was hashed: the insert is undone.
          if (!this.d.invitations.claim(invitation.id, created.id, created.createdAt))
            throw this.refusal(this.d.invitations.byTokenHash(invitation.tokenHash)) ?? new AppError(410, Messages.invitationUsed);
          if (invitation.storageLimit !== null) this.d.users.setStorageLimit(created.id, invitation.storageLimit, created.createdAt);
        },
      });
    } catch (error) {
      // The racing acceptance that committed first made the address taken: say so as the link's state.
      if (error instanceof AppError && error.status === 409 && this.d.invitations.byTokenHash(invitation.tokenHash)?.usedAt != null)
        throw new AppError(410, Messages.invitationUsed);
      throw error;
    }
  }
}
