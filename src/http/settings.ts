import type { AppContext } from '../context.ts';
import {
  docserverBody,
  enabledBody,
  hiddenBody,
  knownProxiesBody,
  maxUploadSizeBody,
  optOutBody,
  shareBaseUrlBody,
  versionsConfigBody,
} from '../contract/admin.ts';
import { DOCSERVER_EXTENSIONS } from '../services/docserver/docserver.ts';
import { requestMeta } from './request-meta.ts';
import { route, routes } from './route.ts';

/** Instance settings (docs/api.md › Instance settings); the rules live in SettingsService. */
export function settingsRoutes(ctx: AppContext) {
  const { settings, accounts, setupCode, idp, contentSearch } = ctx.services;
  return routes([
    route('GET /api/signup-status', {
      handler: ({ request }) => ({
        signupEnabled: accounts.signupOpen(),
        firstUser: accounts.noLoginYet(),
        setupCodeRequired: setupCode.required(requestMeta(request).ip),
        passwordLogin: accounts.passwordLoginEnabled(),
        idp: idp.info(),
      }),
    }),
    // Widened for the web app (docs/thumbnails.md): the map tile template, when one is configured.
    route('GET /api/user/signup-status', {
      handler: ({ principal }) => {
        const status = settings.signupStatus(principal);
        return ctx.config.mapTileUrl ? { ...status, mapTileUrl: ctx.config.mapTileUrl } : status;
      },
    }),
    route('POST /api/user/signup-toggle', {
      body: enabledBody,
      handler: ({ principal, body }) => ({ signupEnabled: settings.update('signupEnabled', body.enabled, 'enabled', principal) }),
    }),
    // Widened for the web app (docs/documents.md): the extensions the editor opens, so it offers "Open in editor" on those only.
    route('GET /api/user/docserver-configured', {
      handler: () => ({ configured: ctx.services.docserver.configured(), extensions: DOCSERVER_EXTENSIONS }),
    }),
    route('GET /api/user/docserver-config', { handler: () => settings.docserverView() }),
    route('PUT /api/user/docserver-config', {
      body: docserverBody,
      handler: ({ principal, body }) => {
        settings.setDocserver(body, principal);
        return settings.docserverView();
      },
    }),
    route('GET /api/user/share-base-url-config', { handler: () => ({ url: settings.get('shareBaseUrl') }) }),
    route('PUT /api/user/share-base-url-config', {
      body: shareBaseUrlBody,
      handler: ({ principal, body }) => ({ url: settings.update('shareBaseUrl', body.url?.trim() ? body.url : null, 'url', principal) }),
    }),
    route('GET /api/user/max-upload-size-config', { handler: () => ({ maxBytes: settings.get('maxUploadBytes') }) }),
    route('PUT /api/user/max-upload-size-config', {
      rawBody: maxUploadSizeBody,
      handler: ({ principal, body }) => ({
        maxBytes: settings.update('maxUploadBytes', (body as { maxBytes?: unknown } | null)?.maxBytes, 'maxBytes', principal),
      }),
    }),
    route('GET /api/user/versions-config', { handler: () => settings.versionsView() }),
    route('PUT /api/user/versions-config', {
      body: versionsConfigBody,
      handler: ({ principal, body }) => settings.updateVersions(body, principal),
    }),
    route('GET /api/user/known-proxies-config', { handler: () => ({ knownProxies: settings.get('knownProxies') }) }),
    route('PUT /api/user/known-proxies-config', {
      rawBody: knownProxiesBody,
      handler: ({ principal, body }) => ({
        knownProxies: settings.update('knownProxies', (body as { knownProxies?: unknown } | null)?.knownProxies, 'knownProxies', principal),
        restartRequired: true,
      }),
    }),
    route('GET /api/user/hide-file-extensions-config', { handler: () => ({ hideFileExtensions: settings.get('hideFileExtensions') }) }),
    route('PUT /api/user/hide-file-extensions-config', {
      body: hiddenBody,
      handler: ({ principal, body }) => ({
        hideFileExtensions: settings.update('hideFileExtensions', body.hidden, 'hidden', principal),
      }),
    }),
    route('GET /api/user/desktop-only-access-config', { handler: () => ({ desktopOnlyAccess: settings.get('desktopOnlyAccess') }) }),
    route('PUT /api/user/desktop-only-access-config', {
      body: enabledBody,
      handler: ({ principal, body }) => ({
        desktopOnlyAccess: settings.update('desktopOnlyAccess', body.enabled, 'enabled', principal),
      }),
    }),
    route('GET /api/user/password-change-config', { handler: () => ({ allowPasswordChange: settings.get('allowPasswordChange') }) }),
    route('PUT /api/user/password-change-config', {
      body: enabledBody,
      handler: ({ principal, body }) => ({
        allowPasswordChange: settings.update('allowPasswordChange', body.enabled, 'enabled', principal),
      }),
    }),
    route('GET /api/user/webdav-account-password-config', { handler: () => ({ enabled: settings.get('davAccountPasswords') }) }),
    route('PUT /api/user/webdav-account-password-config', {
      body: enabledBody,
      handler: ({ principal, body }) => ({ enabled: settings.update('davAccountPasswords', body.enabled, 'enabled', principal) }),
    }),
    route('GET /api/user/content-search-config', { handler: () => contentSearch.config() }),
    route('PUT /api/user/content-search-config', {
      body: enabledBody,
      handler: ({ principal, body }) => contentSearch.setEnabled(body.enabled, 'enabled', principal),
    }),
    route('GET /api/user/content-search-preference', { handler: ({ principal }) => contentSearch.preference(principal) }),
    route('PUT /api/user/content-search-preference', {
      body: optOutBody,
      handler: ({ principal, body }) => contentSearch.setOptOut(principal, body.optOut),
    }),
    route('GET /api/user/people-sharing-config', { handler: () => ({ enabled: settings.get('peopleSharing') }) }),
    route('PUT /api/user/people-sharing-config', {
      body: enabledBody,
      handler: ({ principal, body }) => ({ enabled: settings.update('peopleSharing', body.enabled, 'enabled', principal) }),
    }),
  ]);
}
