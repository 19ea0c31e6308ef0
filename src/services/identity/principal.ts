import { ALL_PERMISSIONS, PERMISSION_CATALOG, type Permission } from '../../contract/permissions.ts';
import { forbidden, Messages } from '../../errors.ts';

function isPermission(key: string): key is Permission {
  return (ALL_PERMISSIONS as readonly string[]).includes(key);
}

/** A login's stored permission keys (JSON) as a set; unknown keys are dropped. */
export function parsePermissions(text: string | null): Set<Permission> {
  if (!text) return new Set();
  return new Set((JSON.parse(text) as string[]).filter(isPermission));
}

/** Who is acting: a login (owner or sub-user) on behalf of its account. Built per request from the database. */
export interface Principal {
  loginId: string;
  /** The owner's user id: items, quota and usage belong to it. */
  accountId: string;
  sessionId: string;
  /** The client address of the request (through known proxies), for audit records. */
  ip: string;
  /** The request's id (X-Request-Id), for audit records. */
  requestId?: string;
  email: string;
  name: string;
  isOwner: boolean;
  isAdmin: boolean;
  permissions: ReadonlySet<Permission>;
  /**
   * Set while the login acts inside an item another account shares with its account (Tree.actor):
   * accountId is then the sharing owner's, and nothing outside `rootId` is reachable.
   */
  share?: { rootId: string; role: 'viewer' | 'editor'; memberAccountId: string };
}

/** Whether the login holds a permission (owners hold all). */
export function can(principal: Pick<Principal, 'isOwner' | 'permissions'>, permission: Permission): boolean {
  return principal.isOwner || principal.permissions.has(permission);
}

function permissionDeniedMessage(permission: Permission): string {
  const label = PERMISSION_CATALOG.find((p) => p.key === permission)!.label;
  return `You do not have permission to do that. Ask the account owner to enable "${label}".`;
}

export function requirePermission(principal: Pick<Principal, 'isOwner' | 'permissions'>, permission: Permission): void {
  if (!can(principal, permission)) throw forbidden(permissionDeniedMessage(permission));
}

export function requireOwner(principal: Principal): void {
  if (!principal.isOwner) throw forbidden(Messages.ownerOnly);
}

export function requireAdmin(principal: Principal, message: string = Messages.adminOnly): void {
  if (!principal.isAdmin) throw forbidden(message);
}
