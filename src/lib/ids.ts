import { randomBytes } from 'node:crypto';

/** Random URL-safe id: 16 bytes as base64url (22 characters), for users, items, sessions. */
export function newId(): string {
  return randomBytes(16).toString('base64url');
}

/** 128 random bits, base64url: unguessable tokens (share links). */
export function newToken(bytes = 24): string {
  return randomBytes(bytes).toString('base64url');
}

export function isUuid(text: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(text);
}
