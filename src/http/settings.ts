import { Elysia } from 'elysia';
import { z } from 'zod';
import type { AppContext } from '../context.ts';
import { DOCSERVER_EXTENSIONS } from '../services/docserver/docserver.ts';
import { readJson } from './body.ts';
import { sessionPlugin } from './guard.ts';
import { requestMeta } from './request-meta.ts';
import { validate } from './validate.ts';
import { describeInput } from './openapi.ts';

const flag = (field: string) => z.object({ [field]: z.boolean({ message: `${field} must be true or false` }) });
const enabledBody = flag('enabled');
const hiddenBody = flag('hidden');
const docserverBody = z.object({ jwtSecret: z.string().max(1024).nullish(), url: z.string().max(2048).nullish() });
const shareBaseUrlBody = z.object({ url: z.string().nullish() });
// These two are checked by the settings service (its rules), so the schemas here only describe them.
const maxUploadSizeBody = z.object({ maxBytes: z.number().int().nullable() });
const knownProxiesBody = z.object({ knownProxies: z.array(z.string()) });
const flagSchemas: Record<string, z.ZodType> = { enabled: enabledBody, hidden: hiddenBody };

/** Instance settings (SPEC "Instance settings"); the rules live in SettingsService. */
export function settingsRoutes(ctx: AppContext) {
  const { settings, accounts, setupCode, idp } = ctx.services;
  const readFlag = async (request: Request, field: string): Promise<boolean> =>
    (validate(flagSchemas[field]!, await readJson(request)) as Record<string, boolean>)[field]!;

  return new Elysia({ name: 'http/settings', seed: ctx.instanceId })
    .use(sessionPlugin(ctx))
    .get('/api/signup-status', ({ request }) => ({
      signupEnabled: accounts.signupOpen(),
      firstUser: accounts.noLoginYet(),
      setupCodeRequired: setupCode.required(requestMeta(request).ip),
      passwordLogin: accounts.passwordLoginEnabled(),
      idp: idp.info(),
    }))
    .get('/api/user/signup-status', ({ principal }) => settings.signupStatus(principal), { session: true })
    .post(
      '/api/user/signup-toggle',
      async ({ principal, request }) => ({
        signupEnabled: settings.update('signupEnabled', await readFlag(request, 'enabled'), 'enabled', principal),
      }),
      { session: true, detail: describeInput({ body: enabledBody }) },
    )
    .get(
      '/api/user/docserver-configured',
      // Widened for the web app (docs/documents.md): the extensions the editor opens, so it offers "Open in editor" on those only.
      () => ({ configured: ctx.services.docserver.configured(), extensions: DOCSERVER_EXTENSIONS }),
      { session: true },
    )
    .get('/api/user/docserver-config', () => settings.docserverView(), { session: true })
    .put(
      '/api/user/docserver-config',
      async ({ principal, request }) => {
        const body = validate(docserverBody, await readJson(request));
        settings.setDocserver(body, principal);
        return settings.docserverView();
      },
      { session: true, detail: describeInput({ body: docserverBody }) },
    )
    .get('/api/user/share-base-url-config', () => ({ url: settings.get('shareBaseUrl') }), { session: true })
    .put(
      '/api/user/share-base-url-config',
      async ({ principal, request }) => {
        const body = validate(shareBaseUrlBody, await readJson(request));
        return { url: settings.update('shareBaseUrl', body.url?.trim() ? body.url : null, 'url', principal) };
      },
      { session: true, detail: describeInput({ body: shareBaseUrlBody }) },
    )
    .get('/api/user/max-upload-size-config', () => ({ maxBytes: settings.get('maxUploadBytes') }), { session: true })
    .put(
      '/api/user/max-upload-size-config',
      async ({ principal, request }) => {
        const body = (await readJson(request)) as { maxBytes?: unknown };
        return { maxBytes: settings.update('maxUploadBytes', body?.maxBytes, 'maxBytes', principal) };
      },
      { session: true, detail: describeInput({ body: maxUploadSizeBody }) },
    )
    .get('/api/user/known-proxies-config', () => ({ knownProxies: settings.get('knownProxies') }), { session: true })
    .put(
      '/api/user/known-proxies-config',
      async ({ principal, request }) => {
        const body = (await readJson(request)) as { knownProxies?: unknown };
        return { knownProxies: settings.update('knownProxies', body?.knownProxies, 'knownProxies', principal), restartRequired: true };
      },
      { session: true, detail: describeInput({ body: knownProxiesBody }) },
    )
    .get('/api/user/hide-file-extensions-config', () => ({ hideFileExtensions: settings.get('hideFileExtensions') }), { session: true })
    .put(
      '/api/user/hide-file-extensions-config',
      async ({ principal, request }) => ({
        hideFileExtensions: settings.update('hideFileExtensions', await readFlag(request, 'hidden'), 'hidden', principal),
      }),
      { session: true, detail: describeInput({ body: hiddenBody }) },
    )
    .get('/api/user/desktop-only-access-config', () => ({ desktopOnlyAccess: settings.get('desktopOnlyAccess') }), { session: true })
    .put(
      '/api/user/desktop-only-access-config',
      async ({ principal, request }) => ({
        desktopOnlyAccess: settings.update('desktopOnlyAccess', await readFlag(request, 'enabled'), 'enabled', principal),
      }),
      { session: true, detail: describeInput({ body: enabledBody }) },
    )
    .get('/api/user/password-change-config', () => ({ allowPasswordChange: settings.get('allowPasswordChange') }), { session: true })
    .put(
      '/api/user/password-change-config',
      async ({ principal, request }) => ({
        allowPasswordChange: settings.update('allowPasswordChange', await readFlag(request, 'enabled'), 'enabled', principal),
      }),
      { session: true, detail: describeInput({ body: enabledBody }) },
    )
    .get('/api/user/people-sharing-config', () => ({ enabled: settings.get('peopleSharing') }), { session: true })
    .put(
      '/api/user/people-sharing-config',
      async ({ principal, request }) => ({
        enabled: settings.update('peopleSharing', await readFlag(request, 'enabled'), 'enabled', principal),
      }),
      { session: true, detail: describeInput({ body: enabledBody }) },
    )
    .get('/api/user/webdav-account-password-config', () => ({ enabled: settings.get('davAccountPasswords') }), { session: true })
    .put(
      '/api/user/webdav-account-password-config',
      async ({ principal, request }) => ({
        enabled: settings.update('davAccountPasswords', await readFlag(request, 'enabled'), 'enabled', principal),
      }),
      { session: true, detail: describeInput({ body: enabledBody }) },
    );
}
