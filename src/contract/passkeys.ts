import { confirmationFields } from './confirmation.ts';
import { z } from 'zod';
import { built, lazySchema } from './lazy-schema.ts';
import { PASSKEY_NAME_MAX } from './limits.ts';
import { BIDI_CONTROL } from './names.ts';

/** Passkeys (WebAuthn): the answers a browser sends and what the server shows of a login's passkeys. */

// WebAuthn's binary fields travel as base64url text; bounded, so no answer costs more than a small parse.
const base64url = (field: string, max = 4096) =>
  z
    .string({ error: `${field} is required` })
    .max(max, `${field} is too long`)
    .regex(/^[A-Za-z0-9_-]*={0,2}$/, `${field} must be base64url`);
// The extension outputs a server may read; others (prf...) are dropped.
const extensions = lazySchema(() =>
  z
    .object({
      appid: z.boolean().optional(),
      credProps: z.object({ rk: z.boolean().optional() }).optional(),
      hmacCreateSecret: z.boolean().optional(),
    })
    .default({}),
);
const TRANSPORTS = ['ble', 'cable', 'hybrid', 'internal', 'nfc', 'smart-card', 'usb'] as const;
type Transport = (typeof TRANSPORTS)[number];
// Hints only: ones this version does not know are dropped rather than refused.
const transports = lazySchema(() =>
  z
    .array(z.string().max(32))
    .max(16)
    .optional()
    .transform((list) => list?.filter((t): t is Transport => (TRANSPORTS as readonly string[]).includes(t))),
);
const attachment = lazySchema(() => z.enum(['platform', 'cross-platform']).optional());

/** A sign-in answer of `navigator.credentials.get()`, as @simplewebauthn/browser encodes it. */
export const assertionBody = lazySchema(() =>
  z.object({
    id: base64url('id', 1024),
    rawId: base64url('rawId', 1024),
    type: z.literal('public-key'),
    response: z.object({
      clientDataJSON: base64url('clientDataJSON'),
      authenticatorData: base64url('authenticatorData'),
      signature: base64url('signature', 1024),
      userHandle: base64url('userHandle', 256).optional(),
    }),
    clientExtensionResults: built(extensions),
    authenticatorAttachment: built(attachment),
  }),
);

/** Starting to add a passkey: the login's password, or (without one) a code of its second factor, asked again. */
export const registerOptionsBody = lazySchema(() => z.object(confirmationFields).nullable());

/** A new passkey: the answer of `navigator.credentials.create()` and an optional name. */
export const registerBody = lazySchema(() =>
  z.object({
    name: z
      .string()
      .trim()
      .max(PASSKEY_NAME_MAX, `Passkey name must be at most ${PASSKEY_NAME_MAX} characters`)
      // Shown in lists and the audit log: a line break or a right-to-left override would disguise it there.
      .refine(
        (name) => !/\p{Cc}/u.test(name) && !BIDI_CONTROL.test(name),
        'Passkey name cannot hold control characters (line breaks, tabs...)',
      )
      .optional(),
    response: z.object({
      id: base64url('id', 1024),
      rawId: base64url('rawId', 1024),
      type: z.literal('public-key'),
      response: z.object({
        clientDataJSON: base64url('clientDataJSON'),
        attestationObject: base64url('attestationObject', 65_536),
        transports: built(transports),
      }),
      clientExtensionResults: built(extensions),
      authenticatorAttachment: built(attachment),
    }),
  }),
);

/** One of the signed-in login's passkeys: never its key or credential id. */
export interface PasskeyEntry {
  id: string;
  name: string;
  createdAt: string;
  lastUsedAt: string | null;
  /** Synced by its platform's password manager (iCloud Keychain, Google Password Manager...), so losing one device does not lose it. */
  backedUp: boolean;
}

/** The options of a ceremony, WebAuthn's JSON for @simplewebauthn/browser to hand to the browser as they are. */
export interface WebAuthnOptions {
  challenge: string;
}
