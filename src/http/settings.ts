import { Elysia } from 'elysia';
import { z } from 'zod';
import type { AppContext } from '../context.ts';
import type { Principal } from '../services/principal.ts';
import { readJson } from './body.ts';
import type { Limits } from './limits.ts';
import { authPlugin } from './plugins/auth.ts';
import { validate } from './validate.ts';

// A fresh object per route: Elysia rewrites a route's hook object when it applies macros.
const admin = () => ({ auth: { role: 'admin' } }) as const;
const flag = (field: string) => z.object({ [field]: z.boolean({ message: `${field} must be true or false` }) });

/** Instance settings (SPEC "Instance settings"); the rules live in SettingsService. */
export function settingsRoutes(ctx: AppContext, limits: Limits) {
  const { settings, accounts, users } = ctx.services;
  const readFlag = async (request: Request, field: string): Promise<boolean> =>
    (validate(flag(field), await readJson(request)) as Record<string, boolean>)[field]!;

  const signupStatus = (principal: Principal) => {
    const s = settings.all();
    const can = principal.isAdmin;
    const base = {
      signupEnabled: s.signupEnabled,
      canToggle: can,
      hideFileExtensions: s.hideFileExtensions,
      canToggleHideFileExtensions: can,
      desktopOnlyAccess: s.desktopOnlyAccess,
      canToggleDesktopOnlyAccess: can,
      allowPasswordChange: s.allowPasswordChange,
      canToggleAllowPasswordChange: can,
    };
    if (!can) return base;
    const totalUsers = users.countLogins();
    return { ...base, totalUsers, additionalUsers: Math.max(0, totalUsers - 1) };
  };

  return new Elysia({ name: 'http/settings', seed: ctx.instanceId })
    .use(authPlugin(ctx, limits))
    .get('/api/signup-status', () => ({ signupEnabled: accounts.signupOpen() }), { publicLimit: 'general' })
    .get('/api/user/signup-status', ({ principal }) => signupStatus(principal), { auth: true })
    .post(
      '/api/user/signup-toggle',
      async ({ principal, request }) => ({
        signupEnabled: settings.update('signupEnabled', await readFlag(request, 'enabled'), 'enabled', principal),
      }),
      admin(),
    )
    .get('/api/user/docserver-configured', () => ({ configured: settings.get('docserver') !== null }), { auth: true })
    .get('/api/user/docserver-config', () => docserverView(settings.get('docserver')), admin())
    .put(
      '/api/user/docserver-config',
      async ({ principal, request }) => {
        const body = validate(
          z.object({ jwtSecret: z.string().max(1024).nullish(), url: z.string().max(2048).nullish() }),
          await readJson(request),
        );
        return docserverView(settings.setDocserver(body, principal));
      },
      admin(),
    )
    .get('/api/user/share-base-url-config', () => ({ url: settings.get('shareBaseUrl') }), admin())
    .put(
      '/api/user/share-base-url-config',
      async ({ principal, request }) => {
        const body = validate(z.object({ url: z.string().nullish() }), await readJson(request));
        return { url: settings.update('shareBaseUrl', body.url?.trim() ? body.url : null, 'url', principal) };
      },
      admin(),
    )
    .get('/api/user/max-upload-size-config', () => ({ maxBytes: settings.get('maxUploadBytes') }), { auth: true })
    .put(
      '/api/user/max-upload-size-config',
      async ({ principal, request }) => {
        const body = (await readJson(request)) as { maxBytes?: unknown };
        return { maxBytes: settings.update('maxUploadBytes', body?.maxBytes, 'maxBytes', principal) };
      },
      admin(),
    )
    .get('/api/user/known-proxies-config', () => ({ knownProxies: settings.get('knownProxies') }), admin())
    .put(
      '/api/user/known-proxies-config',
      async ({ principal, request }) => {
        const body = (await readJson(request)) as { knownProxies?: unknown };
        return { knownProxies: settings.update('knownProxies', body?.knownProxies, 'knownProxies', principal), restartRequired: true };
      },
      admin(),
    )
    .get('/api/user/hide-file-extensions-config', () => ({ hideFileExtensions: settings.get('hideFileExtensions') }), { auth: true })
    .put(
      '/api/user/hide-file-extensions-config',
      async ({ principal, request }) => ({
        hideFileExtensions: settings.update('hideFileExtensions', await readFlag(request, 'hidden'), 'hidden', principal),
      }),
      admin(),
    )
    .get('/api/user/desktop-only-access-config', () => ({ desktopOnlyAccess: settings.get('desktopOnlyAccess') }), { auth: true })
    .put(
      '/api/user/desktop-only-access-config',
      async ({ principal, request }) => ({
        desktopOnlyAccess: settings.update('desktopOnlyAccess', await readFlag(request, 'enabled'), 'enabled', principal),
      }),
      admin(),
    )
    .get('/api/user/password-change-config', () => ({ allowPasswordChange: settings.get('allowPasswordChange') }), { auth: true })
    .put(
      '/api/user/password-change-config',
      async ({ principal, request }) => ({
        allowPasswordChange: settings.update('allowPasswordChange', await readFlag(request, 'enabled'), 'enabled', principal),
      }),
      admin(),
    );
}

function docserverView(value: { url: string; jwtSecret: string } | null) {
  return { jwtSecretSet: value !== null, url: value?.url ?? '' };
}
