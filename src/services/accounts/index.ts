import { PageCache } from '../files/page-cache.ts';
import type { AuditService } from '../admin/audit.ts';
import type { SettingsService } from '../admin/settings.ts';
import type { DavLockService } from '../dav/dav-locks.ts';
import type { FilesServices } from '../files/index.ts';
import type { FileEvents } from '../files/file-events.ts';
import type { SharingServices } from '../sharing/index.ts';
import type { Infrastructure } from '../infrastructure.ts';
import { AccountService } from './accounts.ts';
import { AppPasswordService } from './app-passwords.ts';
import { ClientService } from './clients.ts';
import { IdentityCheck } from './identity-check.ts';
import { LoginFlowService } from './login-flows.ts';
import { PasswordTries } from './password-tries.ts';
import { InvitationService } from './invitations.ts';
import { MfaService } from './mfa.ts';
import { PasskeyService } from './passkeys.ts';
import { SessionService } from './sessions.ts';
import { SetupCodeService } from './setup-code.ts';
import { SubUserService } from './sub-users.ts';
import { TeamFolderService } from './team-folders.ts';
import { UsersService } from './users.ts';

export interface AccountsServices {
  sessions: SessionService;
  mfa: MfaService;
  passkeys: PasskeyService;
  accounts: AccountService;
  setupCode: SetupCodeService;
  users: UsersService;
  invitations: InvitationService;
  subUsers: SubUserService;
  clients: ClientService;
  appPasswords: AppPasswordService;
  loginFlows: LoginFlowService;
  teamFolders: TeamFolderService;
}

type AccountsDeps = { audit: AuditService; settings: SettingsService; davLocks: DavLockService; events: FileEvents } & Pick<
  FilesServices,
  'quota' | 'trash' | 'changes'
> &
  Pick<SharingServices, 'members' | 'shares'>;

/** Accounts, their logins (sub-users, app passwords and the clients' sign-in flows, desktop clients), sessions and second factors. */
export function createAccountsServices(
  infra: Infrastructure,
  { audit, settings, davLocks, events, quota, trash, members, shares, changes }: AccountsDeps,
) {
  const { clock, config, queue, repos, jwtSecret } = infra;
  const { transactions } = repos;
  const sessions = new SessionService({
    clock,
    retentionClock: infra.retentionClock,
    presence: infra.presence,
    jwtSecret,
    transactions,
    users: repos.users,
    sessions: repos.sessions,
    database: repos.database,
    audit,
    hub: infra.hub,
  });
  const mfa = new MfaService(repos.mfa, infra.keyring, clock, audit, sessions);
  const passwordTries = new PasswordTries({ clock, audit });
  const identity = new IdentityCheck({ clock, users: repos.users, sessions: repos.sessions, mfa, passwordTries, audit });
  const passkeys = new PasskeyService({ clock, repo: repos.passkeys, users: repos.users, mfa, identity, audit });
  const setupCode = new SetupCodeService(jwtSecret, config.host, () => !repos.users.hasAny());
  const appPasswords = new AppPasswordService({
    clock,
    transactions,
    repo: repos.appPasswords,
    users: repos.users,
    settings,
    audit,
    davLocks,
    database: repos.database,
    identity,
    passwordTries,
  });
  const accounts = new AccountService({
    clock,
    transactions,
    users: repos.users,
    identities: repos.idp,
    settings,
    sessions,
    mfa,
    passkeys,
    audit,
    idp: config.idp,
    appPasswords,
    passwordTries,
    setupCode,
    profiles: new PageCache(
      () => repos.database.changeVersion(),
      () => 1,
    ),
  });
  const services: AccountsServices = {
    sessions,
    mfa,
    passkeys,
    accounts,
    setupCode,
    users: new UsersService({
      clock,
      transactions,
      users: repos.users,
      items: repos.items,
      members: repos.members,
      teamFolders: repos.teamFolders,
      quota,
      audit,
      sessions,
      queue,
      trash,
      davLocks,
      identity,
    }),
    invitations: new InvitationService({ clock, invitations: repos.invitations, users: repos.users, accounts, sessions, audit, identity }),
    subUsers: new SubUserService(repos.users, clock, accounts, sessions, audit, davLocks, infra.hub),
    clients: new ClientService(repos.users, infra.presence, sessions),
    appPasswords,
    loginFlows: new LoginFlowService(clock, appPasswords),
    teamFolders: new TeamFolderService({
      clock,
      transactions,
      users: repos.users,
      items: repos.items,
      groups: repos.groups,
      teamFolders: repos.teamFolders,
      queue,
      quota,
      audit,
      members,
      membership: repos.members,
      trash,
      shares,
      changes,
      events,
      peopleSharing: () => settings.get('peopleSharing'),
    }),
  };
  return { services };
}
