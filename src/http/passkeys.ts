import type { AppContext } from '../context.ts';
import { assertionBody, registerBody, registerOptionsBody } from '../contract/passkeys.ts';
import { relyingPartyOf } from '../services/accounts/passkeys.ts';
import { clientInfo } from './accounts.ts';
import { tokenCookie } from './cookies.ts';
import { requestMeta } from './request-meta.ts';
import { route, routes } from './route.ts';

/** Passkeys: a login's own (list, add, remove) and signing in with one, no email needed. */
export function passkeyRoutes(ctx: AppContext) {
  const { passkeys, accounts } = ctx.services;
  // The relying party is the configured public URL's host, else the host the browser used.
  const rp = (request: Request) => relyingPartyOf(ctx.config.publicUrl ?? requestMeta(request).origin);
  return routes([
    route('GET /api/passkeys', { handler: ({ principal }) => ({ passkeys: passkeys.list(principal) }) }),
    route('POST /api/passkeys/register/options', {
      summary:
        'Options for navigator.credentials.create(), valid for one registration within 5 minutes; asks for the password (or a code) again',
      body: registerOptionsBody,
      handler: ({ principal, request, body }) => passkeys.registrationOptions(principal, rp(request), body),
    }),
    route('POST /api/passkeys', {
      body: registerBody,
      handler: async ({ principal, body, set }) => {
        const passkey = await passkeys.register(principal, body);
        set.status = 201;
        return { passkey };
      },
    }),
    route('DELETE /api/passkeys/:id', { handler: ({ principal, params }) => passkeys.remove(principal, params.id) }),
    route('POST /api/passkeys/sign-in/options', {
      summary: 'Options for navigator.credentials.get(), valid for one sign-in within 5 minutes',
      handler: ({ request }) => passkeys.signInOptions(rp(request), requestMeta(request).ip),
    }),
    route('POST /api/passkeys/sign-in', {
      body: assertionBody,
      handler: async ({ body, request, set }) => {
        const { user, token } = await accounts.signInWithPasskey(body, clientInfo(request));
        set.headers['set-cookie'] = tokenCookie(token, requestMeta(request).secure);
        return { user };
      },
    }),
  ]);
}
