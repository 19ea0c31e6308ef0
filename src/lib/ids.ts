import { randomBytes } from 'node:crypto';

/**
 * Random URL-safe id: 16 bytes as base64url (22 characters), for users, items, sessions. Never one that starts with
 * `-`: the CLI takes ids as arguments, and an argument starting with `-` reads as an option (1 id in 64 did).
 */
export function newId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (id[0] !== '-') return id;
  }
}

/** 128 random bits, base64url: unguessable tokens (share links). */
export function newToken(bytes = 24): string {
  return randomBytes(bytes).toString('base64url');
}

export function isUuid(text: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(text);
}
