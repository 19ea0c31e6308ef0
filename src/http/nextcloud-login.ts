import { z } from 'zod';
import type { AppContext } from '../context.ts';
import { loginFlowGrantBody } from '../contract/accounts.ts';
import { badRequest } from '../errors.ts';
import { readJsonOrForm } from './body.ts';
import { ocsResponse } from './nextcloud.ts';
import { requestMeta } from './request-meta.ts';
import { route, routes } from './route.ts';

/** The web app's consent page of a flow: sign-in first when needed (its `next`), then "Grant access" or "Cancel". */
const consentPage = (origin: string, loginToken: string) => `${origin}/connect/${loginToken}`;

/**
 * The Nextcloud clients' sign-in: login flow v2 (desktop: start, then poll until access is granted), v1
 * (mobile: a web view that ends at an `nc://login/` address), the consent page's API, and the apps' sign-out
 * (`DELETE /ocs/v2.php/core/apppassword`, which revokes the app password it is called with).
 */
export function nextcloudLoginRoutes(ctx: AppContext) {
  const { loginFlows, appPasswords } = ctx.services;
  return routes([
    route('POST /index.php/login/v2', {
      summary: 'Login flow v2: {poll: {token, endpoint}, login}; the client opens `login` in a browser and polls `endpoint` with `token`',
      handler: ({ request }) => {
        const { origin } = requestMeta(request);
        const flow = loginFlows.start('v2', request.headers.get('user-agent'), origin);
        return {
          poll: { token: flow.pollToken!, endpoint: `${origin}/index.php/login/v2/poll` },
          login: consentPage(origin, flow.loginToken),
        };
      },
    }),
    route('POST /index.php/login/v2/poll', {
      summary: 'Login flow v2 poll (form field or JSON `token`): 404 until access is granted, then once {server, loginName, appPassword}',
      read: (request) => readJsonOrForm(request, []),
      rawBody: z.object({ token: z.string() }),
      handler: ({ body: raw, set }) => {
        const body = raw as { token?: unknown } | null;
        const credentials = typeof body?.token === 'string' ? loginFlows.poll(body.token) : null;
        if (credentials) return credentials;
        set.status = 404;
        return [];
      },
    }),
    route('GET /index.php/login/flow', {
      summary: 'Login flow v1 (mobile apps, header `OCS-APIREQUEST: true`): to the sign-in and consent page',
      handler: ({ request }) => {
        if (request.headers.get('ocs-apirequest')?.toLowerCase() !== 'true')
          throw badRequest('This page is opened by the Nextcloud mobile apps when they sign in. Add this server in the app to sign in.');
        const { origin } = requestMeta(request);
        const flow = loginFlows.start('v1', request.headers.get('user-agent'), origin);
        return new Response(null, { status: 302, headers: { Location: consentPage(origin, flow.loginToken) } });
      },
    }),
    route('GET /api/login-flows/:token', {
      summary: 'The client a sign-in flow grants access to: {clientName, kind}',
      handler: ({ params }) => loginFlows.view(params.token),
    }),
    route('POST /api/login-flows/:token/grant', {
      summary: 'Grants the client access with a new app password named after it: {redirect} (v1: the nc://login/ address; v2: null)',
      body: loginFlowGrantBody,
      handler: ({ principal, params, body }) => loginFlows.grant(principal, params.token, body),
    }),
    route('POST /api/login-flows/:token/cancel', {
      summary: 'Refuses the client access: the flow ends',
      handler: ({ params }) => {
        loginFlows.cancel(params.token);
        return { message: 'Access not granted' };
      },
    }),
    route('DELETE /ocs/v2.php/core/apppassword', {
      summary: 'Revokes the app password the request signs in with (the apps call it when their account is removed)',
      handler: ({ request }) => {
        appPasswords.revokeCurrent(requestMeta(request).principal!);
        const { body, contentType } = ocsResponse(request, 200, 'OK', []);
        return new Response(body, { headers: { 'Content-Type': contentType } });
      },
    }),
  ]);
}
