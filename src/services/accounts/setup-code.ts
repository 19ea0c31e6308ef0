import { createHmac, timingSafeEqual } from 'node:crypto';
import { forbidden } from '../../errors.ts';
import { isLoopback } from '../../lib/ip.ts';

// Crockford's base32 without I, L, O and U: nothing to misread when typed from a console.
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const LENGTH = 12;

/** Ignores case, spaces and dashes, so a code typed as XXXX-XXXX-XXXX or xxxxxxxxxxxx both match. */
const normalize = (text: string) => text.toUpperCase().replace(/[\s-]/g, '');

/**
 * The one-time code that guards the first sign-up of an instance reachable beyond loopback, so the first
 * person on the LAN to open the page does not become its admin. It is derived from the token signing
 * secret (nothing to store; the server and `coffer setup-code` agree) and has no use once an account exists.
 */
export class SetupCodeService {
  private readonly code: string;

  constructor(
    signingSecret: Uint8Array,
    private readonly listenHost: string,
    private readonly noLoginYet: () => boolean,
  ) {
    const digest = createHmac('sha256', signingSecret).update('coffer-setup-code-v1').digest();
    let code = '';
    for (let i = 0; i < LENGTH; i++) code += ALPHABET[digest[i]! % ALPHABET.length];
    this.code = code;
  }

  /** The code as printed, in groups of four; null once an account exists. */
  current(): string | null {
    if (!this.noLoginYet()) return null;
    return this.code.match(/.{4}/g)!.join('-');
  }

  /** Whether a sign-up from `ip` needs the code: no account yet, and the server or the request is beyond loopback. */
  required(ip: string): boolean {
    return this.noLoginYet() && !(isLoopback(this.listenHost) && isLoopback(ip));
  }

  /** Throws 403 unless the sign-up may go ahead without a code or `given` is the code. */
  check(given: string | undefined, ip: string): void {
    if (!this.required(ip)) return;
    if (given === undefined || given.trim() === '') {
      throw forbidden(
        'Enter the setup code to create the first account: the server printed it when it started, and `coffer setup-code` on the server prints it again',
      );
    }
    const a = Buffer.from(normalize(given));
    const b = Buffer.from(this.code);
    if (a.length !== b.length || !timingSafeEqual(a, b))
      throw forbidden('That setup code is not right: check it against `coffer setup-code` on the server');
  }
}
