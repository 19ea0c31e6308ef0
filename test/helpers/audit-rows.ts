import type { NewAuditLogRow } from '../../src/db/repos/audit.ts';

/** An audit log row for `action` with every optional field empty: what a test's audit pump writes for each event. */
export function auditRow(action: string): NewAuditLogRow {
  return {
    at: 1,
    action,
    status: 'success',
    actor: 'cli',
    loginId: null,
    email: null,
    accountId: null,
    ip: null,
    targetType: null,
    targetId: null,
    details: null,
    requestId: null,
  };
}
