import { Elysia } from 'elysia';
import type { AppContext } from '../context.ts';
import { relyingPartyOf } from '../services/accounts/passkeys.ts';
import { readJson } from './body.ts';
import { tokenCookie } from './cookies.ts';
import { sessionPlugin } from './guard.ts';
import { describeInput } from './openapi.ts';
import { requestMeta } from './request-meta.ts';
import { validate } from './validate.ts';
import { assertionBody, registerBody } from './passkey-schemas.ts';

/** Passkeys: a login's own (list, add, remove) and signing in with one, no email needed. */
export function passkeyRoutes(ctx: AppContext) {
  const { passkeys, accounts } = ctx.services;
  // The relying party is the configured public URL's host, else the host the browser used.
  const rp = (request: Request) => relyingPartyOf(ctx.config.publicUrl ?? requestMeta(request).origin);
  const info = (request: Request) => {
    const meta = requestMeta(request);
    return { ip: meta.ip, userAgent: request.headers.get('user-agent') ?? '', requestId: meta.id };
  };
  return new Elysia({ name: 'http/passkeys', seed: ctx.instanceId })
    .use(sessionPlugin(ctx))
    .get('/api/passkeys', ({ principal }) => ({ passkeys: passkeys.list(principal) }), { session: true })
    .post('/api/passkeys/register/options', ({ principal, request }) => passkeys.registrationOptions(principal, rp(request)), {
      session: true,
      detail: describeInput({ summary: 'Options for navigator.credentials.create(), valid for one registration within 5 minutes' }),
    })
    .post(
      '/api/passkeys',
      async ({ principal, request, set }) => {
        const passkey = await passkeys.register(principal, validate(registerBody, await readJson(request)));
        set.status = 201;
        return { passkey };
      },
      { session: true, detail: describeInput({ body: registerBody }) },
    )
    .delete('/api/passkeys/:id', ({ principal, params }) => passkeys.remove(principal, params.id), { session: true })
    .post('/api/passkeys/sign-in/options', ({ request }) => passkeys.signInOptions(rp(request)), {
      detail: describeInput({ summary: 'Options for navigator.credentials.get(), valid for one sign-in within 5 minutes' }),
    })
    .post(
      '/api/passkeys/sign-in',
      async ({ request, set }) => {
        const { user, token } = await accounts.signInWithPasskey(validate(assertionBody, await readJson(request)), info(request));
        set.headers['set-cookie'] = tokenCookie(token, requestMeta(request).secure);
        return { user };
      },
      { detail: describeInput({ body: assertionBody }) },
    );
}
