import type { AdminOrigins } from '../admin/admin-origins.ts';
import type { AuditService } from '../admin/audit.ts';
import type { SettingsService } from '../admin/settings.ts';
import type { FileEvents } from '../files/file-events.ts';
import type { FilesServices } from '../files/index.ts';
import type { Tree } from '../files/tree.ts';
import type { Infrastructure } from '../infrastructure.ts';
import { DocserverService } from './docserver.ts';

export interface DocserverServices {
  docserver: DocserverService;
}

type DocserverDeps = { audit: AuditService; settings: SettingsService; adminOrigins: AdminOrigins; tree: Tree; events: FileEvents } & Pick<
  FilesServices,
  'uploads' | 'downloads'
>;

/** Editing office documents in an external document server. */
export function createDocserverServices(infra: Infrastructure, d: DocserverDeps) {
  const services: DocserverServices = {
    docserver: new DocserverService({
      clock: infra.clock,
      log: infra.log,
      config: infra.config,
      jwtSecret: infra.jwtSecret,
      repo: infra.repos.docserver,
      items: infra.repos.items,
      libraries: infra.repos.libraries,
      users: infra.repos.users,
      tree: d.tree,
      settings: d.settings,
      adminOrigins: d.adminOrigins,
      uploads: d.uploads,
      downloads: d.downloads,
      schedules: infra.schedules,
      events: d.events,
      audit: d.audit,
    }),
  };
  return { services };
}
