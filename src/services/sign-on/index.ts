import type { Lifecycle } from '../../lib/lifecycle.ts';
import type { AccountsServices } from '../accounts/index.ts';
import type { AuditService } from '../admin/audit.ts';
import type { GroupService } from '../sharing/groups.ts';
import type { Infrastructure } from '../infrastructure.ts';
import { IdpService } from './sign-on.ts';

export interface SignOnServices {
  idp: IdpService;
}

type SignOnDeps = { audit: AuditService; groups: GroupService } & Pick<AccountsServices, 'accounts' | 'mfa' | 'setupCode'>;

/** Sign-on through an OpenID Connect identity provider. */
export function createSignOnServices(infra: Infrastructure, { audit, groups, accounts, mfa, setupCode }: SignOnDeps) {
  const idp = new IdpService({
    config: infra.config.idp,
    clock: infra.clock,
    log: infra.log,
    jwtSecret: infra.jwtSecret,
    identities: infra.repos.idp,
    accounts,
    mfa,
    audit,
    setupCode,
    groups,
  });
  // Start reads the client secret (a start-up error if it cannot); discovery goes on in the background.
  const identityProvider: Lifecycle = { name: 'identity provider', start: () => idp.start(), stop: () => idp.stop() };
  return { services: { idp } satisfies SignOnServices, lifecycles: { identityProvider } };
}
