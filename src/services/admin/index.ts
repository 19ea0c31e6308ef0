import type { Lifecycle } from '../../lib/lifecycle.ts';
import type { Infrastructure } from '../infrastructure.ts';
import { AdminOrigins } from './admin-origins.ts';
import { AuditService } from './audit.ts';
import { MetricsService } from './metrics.ts';
import { SettingsService } from './settings.ts';
import { StorageLocationService } from './storage-location.ts';
import { VersionService } from './version.ts';

export interface AdminServices {
  version: VersionService;
  metrics: MetricsService;
  audit: AuditService;
  settings: SettingsService;
  adminOrigins: AdminOrigins;
  storageLocation: StorageLocationService;
}

/** Wired first: every other domain records to the audit log and reads the instance settings. */
export function createAdminServices(infra: Infrastructure) {
  const { clock, log, config, repos } = infra;
  const metrics = new MetricsService();
  const audit = new AuditService({
    repo: repos.audit,
    metrics,
    clock,
    retentionClock: infra.retentionClock,
    log,
    retentionDays: config.auditRetentionDays,
    gaugeIntervalSeconds: config.queueMetricsIntervalSeconds,
  });
  const services: AdminServices = {
    version: new VersionService(infra),
    metrics,
    audit,
    settings: new SettingsService(repos.settings, repos.database, repos.users, clock, audit),
    adminOrigins: new AdminOrigins(repos.settings, clock),
    storageLocation: new StorageLocationService({
      configured: infra.driver.location,
      locations: repos.storageLocation,
      items: repos.items,
      clock,
    }),
  };
  // Audit entries are written in the background; stopping writes what is still queued.
  const auditLog: Lifecycle = { name: 'audit log', start: () => audit.start(), stop: () => audit.stop() };
  return { services, lifecycles: { auditLog } };
}
