import type { CoreContext } from '../context.ts';
import { AccountService } from './accounts.ts';
import { MfaService } from './mfa.ts';
import { QuotaService } from './quota.ts';
import { SessionService } from './sessions.ts';
import { SettingsService } from './settings.ts';
import { VersionService } from './version.ts';
import { UsersService } from './users.ts';
import { SubUserService } from './sub-users.ts';
import { ClientService } from './clients.ts';

/** The domain services; each area adds itself here and registers its jobs and schedules. */
export interface Services {
  version: VersionService;
  settings: SettingsService;
  sessions: SessionService;
  mfa: MfaService;
  accounts: AccountService;
  quota: QuotaService;
  users: UsersService;
  subUsers: SubUserService;
  clients: ClientService;
}

export function createServices(core: CoreContext): Services {
  const settings = new SettingsService(core);
  const sessions = new SessionService(core);
  const mfa = new MfaService(core);
  const accounts = new AccountService(core, settings, sessions, mfa);
  const quota = new QuotaService(core);
  return {
    version: new VersionService(core),
    settings,
    sessions,
    mfa,
    accounts,
    quota,
    users: new UsersService(core, quota),
    subUsers: new SubUserService(core, accounts, sessions),
    clients: new ClientService(core, sessions),
  };
}
