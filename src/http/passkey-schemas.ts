import { z } from 'zod';
import { PASSKEY_NAME_MAX } from '../services/accounts/passkeys.ts';

// WebAuthn's binary fields travel as base64url text; bounded, so no answer costs more than a small parse.
const base64url = (field: string, max = 4096) =>
  z
    .string({ error: `${field} is required` })
    .max(max, `${field} is too long`)
    .regex(/^[A-Za-z0-9_-]*={0,2}$/, `${field} must be base64url`);
const extensions = z.record(z.string(), z.unknown()).default({});
const attachment = z.enum(['platform', 'cross-platform']).optional();

/** A sign-in answer of `navigator.credentials.get()`, as @simplewebauthn/browser encodes it. */
export const assertionBody = z.object({
  id: base64url('id', 1024),
  rawId: base64url('rawId', 1024),
  type: z.literal('public-key'),
  response: z.object({
    clientDataJSON: base64url('clientDataJSON'),
    authenticatorData: base64url('authenticatorData'),
    signature: base64url('signature', 1024),
    userHandle: base64url('userHandle', 256).optional(),
  }),
  clientExtensionResults: extensions,
  authenticatorAttachment: attachment,
});

/** A new passkey: the answer of `navigator.credentials.create()` and an optional name. */
export const registerBody = z.object({
  name: z.string().trim().max(PASSKEY_NAME_MAX, `Passkey name must be at most ${PASSKEY_NAME_MAX} characters`).optional(),
  response: z.object({
    id: base64url('id', 1024),
    rawId: base64url('rawId', 1024),
    type: z.literal('public-key'),
    response: z.object({
      clientDataJSON: base64url('clientDataJSON'),
      attestationObject: base64url('attestationObject', 65_536),
      transports: z
        .array(z.enum(['ble', 'cable', 'hybrid', 'internal', 'nfc', 'smart-card', 'usb']))
        .max(8)
        .optional(),
    }),
    clientExtensionResults: extensions,
    authenticatorAttachment: attachment,
  }),
});
