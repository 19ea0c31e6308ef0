import {
  browserSupportsWebAuthn,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  startAuthentication,
  startRegistration,
} from '@simplewebauthn/browser';
import { signal } from '@preact/signals';
import type { ApiBody } from '../../src/contract/api.ts';
import { api } from '../api/index.ts';
import { ApiError } from './api.ts';

/**
 * Passkeys work in this browser here: WebAuthn exists, the page is HTTPS or localhost (a secure context),
 * and its host is a name (browsers refuse an address such as 127.0.0.1 or 192.168.1.5, secure or not).
 */
export const passkeysAvailable = () => window.isSecureContext && !/^[\d.]+$|^\[/.test(location.hostname) && browserSupportsWebAuthn();

/** Bumped when this page adds or removes a passkey, so every list of them on the page loads again. */
export const passkeysChanged = signal(0);

/** What a failed passkey ceremony means to the person at the keyboard. */
export function passkeyErrorText(err: unknown): string {
  if (err instanceof ApiError) return err.message;
  const name = (err as { name?: string }).name;
  if (name === 'NotAllowedError' || name === 'AbortError')
    return 'The passkey request was cancelled or timed out. Nothing was changed; try again when ready.';
  if (name === 'InvalidStateError') return 'This device already holds a passkey for your account: it is in the list below.';
  if (name === 'SecurityError')
    return 'The browser refused a passkey for this address. Passkeys need HTTPS, or http://localhost; ask the administrator.';
  return (err as Error).message || 'The passkey request failed. Try again.';
}

/** Asks the browser for one of this site's passkeys (any: no email needed); the answer to post. */
export async function passkeyAnswer(): Promise<ApiBody<'POST /api/passkeys/sign-in'>> {
  // The contract leaves the options opaque: they are WebAuthn's own JSON, made by the server's WebAuthn library.
  const optionsJSON = (await api.passkeys.signInOptions()) as PublicKeyCredentialRequestOptionsJSON;
  return startAuthentication({ optionsJSON });
}

/** Creates a passkey on this device for the signed-in login and registers it under `name`; `proof` is the password or a code, asked again. */
export async function createPasskey(name: string, proof: ApiBody<'POST /api/passkeys/register/options'>): Promise<void> {
  const optionsJSON = (await api.passkeys.registrationOptions(proof)) as PublicKeyCredentialCreationOptionsJSON;
  const response = await startRegistration({ optionsJSON });
  await api.passkeys.add({ ...(name.trim() ? { name: name.trim() } : {}), response });
}
