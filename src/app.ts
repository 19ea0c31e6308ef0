import { Elysia } from 'elysia';
import type { AppContext } from './context.ts';
import { KeyedCap } from './lib/keyed-cap.ts';
import { ClientIpResolver } from './http/client-ip.ts';
import { corePlugin } from './http/plugins/core.ts';
import { createLimits } from './http/limits.ts';
import { guardPlugin } from './http/guard.ts';
import { accountRoutes } from './http/accounts.ts';
import { idpRoutes } from './http/sign-on.ts';
import { eventRoutes } from './http/events.ts';
import { downloadRoutes } from './http/downloads.ts';
import { thumbnailRoutes } from './http/thumbnails.ts';
import { albumRoutes } from './http/albums.ts';
import { fileVersionRoutes } from './http/file-versions.ts';
import { itemRoutes } from './http/items.ts';
import { trashRoutes } from './http/trash.ts';
import { uploadRoutes } from './http/uploads.ts';
import { tusRoutes } from './http/tus.ts';
import { activityRoutes } from './http/activity.ts';
import { SseStreams, type SseOptions } from './events/sse.ts';
import { healthRoutes } from './http/health.ts';
import { versionRoutes } from './http/version.ts';
import { sessionRoutes } from './http/sessions.ts';
import { mfaRoutes } from './http/mfa.ts';
import { passkeyRoutes } from './http/passkeys.ts';
import { settingsRoutes } from './http/settings.ts';
import { userRoutes } from './http/users.ts';
import { desktopOnlyPlugin } from './http/plugins/desktop-only.ts';
import { IpMatcher } from './lib/ip.ts';
import { orphanRoutes } from './http/orphans.ts';
import { backupRoutes } from './http/backups.ts';
import { metricsRoutes } from './http/metrics.ts';
import { shareRoutes } from './http/shares.ts';
import { memberRoutes } from './http/members.ts';
import { groupRoutes } from './http/groups.ts';
import { teamFolderRoutes } from './http/team-folders.ts';
import { libraryRoutes } from './http/libraries.ts';
import { publicShareRoutes } from './http/public-shares.ts';
import { shareDomainPlugin } from './http/plugins/share-domain.ts';
import { webAppRoutes } from './http/web-app.ts';
import { openApiRoutes } from './http/openapi.ts';
import { docserverRoutes } from './http/docserver.ts';
import { appPasswordRoutes } from './http/app-passwords.ts';
import { webhookRoutes } from './http/webhooks.ts';
import { auditRoutes } from './http/audit.ts';
import { davRoutes } from './http/dav/dav.ts';
import { nextcloudLoginRoutes } from './http/nextcloud-login.ts';
import { nextcloudRoutes } from './http/nextcloud.ts';
import { davTrashbinRoutes } from './http/dav/trashbin.ts';
import { davVersionRoutes } from './http/dav/versions.ts';
import { nextcloudPreviewRoutes } from './http/nextcloud-previews.ts';
import { nextcloudUploadRoutes } from './http/dav/chunked-uploads.ts';
import { PUSH_MAX_MESSAGE_BYTES, pushRoutes } from './http/push.ts';
import { PushHub, type PushOptions } from './services/changes/desktop-push.ts';

export interface AppOptions {
  /** Known proxies as IPs/CIDRs (hostnames resolved by the caller), read once at start-up. */
  knownProxies?: string[];
  /** Event stream tuning (tests shorten the keepalive). */
  sse?: SseOptions;
  /** Desktop push tuning (tests shorten the ping and lower the caps). */
  push?: PushOptions;
}

/** Builds the HTTP app: the shared conventions, then one plugin per area. Never listens. */
export function createApp(ctx: AppContext, opts: AppOptions = {}) {
  const ipResolver = new ClientIpResolver(new IpMatcher(opts.knownProxies ?? []));
  const limits = createLimits(ctx.clock, ctx.config.rateLimits);
  // The only WebSockets are desktop push's, whose client sends two short credentials and nothing else of size.
  // Elysia's router, not the runtime's: the runtime's kept each request's body stream a full collection past its answer.
  const app = new Elysia({ systemRouter: false, websocket: { maxPayloadLength: PUSH_MAX_MESSAGE_BYTES } });
  return app
    .use(
      corePlugin({
        log: ctx.log,
        ipResolver,
        seed: ctx.instanceId,
        addressCap: new KeyedCap(ctx.config.maxConnectionsPerIp),
        mapTileOrigin: ctx.config.mapTileUrl && new URL(ctx.config.mapTileUrl.replace(/\{[zxy]\}/g, '0')).origin,
      }),
    )
    .use(shareDomainPlugin(ctx))
    .use(desktopOnlyPlugin(ctx))
    .use(guardPlugin(ctx, limits))
    .use(healthRoutes())
    .use(metricsRoutes(ctx))
    .use(accountRoutes(ctx))
    .use(idpRoutes(ctx))
    .use(sessionRoutes(ctx))
    .use(mfaRoutes(ctx))
    .use(passkeyRoutes(ctx))
    .use(settingsRoutes(ctx))
    .use(userRoutes(ctx))
    .use(orphanRoutes(ctx))
    .use(backupRoutes(ctx))
    .use(itemRoutes(ctx))
    .use(uploadRoutes(ctx))
    .use(tusRoutes(ctx))
    .use(downloadRoutes(ctx))
    .use(thumbnailRoutes(ctx))
    .use(albumRoutes(ctx))
    .use(fileVersionRoutes(ctx))
    .use(trashRoutes(ctx))
    .use(shareRoutes(ctx))
    .use(memberRoutes(ctx))
    .use(groupRoutes(ctx))
    .use(teamFolderRoutes(ctx))
    .use(libraryRoutes(ctx))
    .use(publicShareRoutes(ctx))
    .use(docserverRoutes(ctx))
    .use(eventRoutes(ctx, new SseStreams(ctx.hub, opts.sse)))
    .use(activityRoutes(ctx))
    .use(versionRoutes(ctx))
    .use(appPasswordRoutes(ctx))
    .use(webhookRoutes(ctx))
    .use(auditRoutes(ctx))
    .use(davRoutes(ctx, limits))
    .use(nextcloudLoginRoutes(ctx))
    .use(nextcloudRoutes(ctx))
    .use(davTrashbinRoutes(ctx))
    .use(davVersionRoutes(ctx))
    .use(nextcloudPreviewRoutes(ctx))
    .use(nextcloudUploadRoutes(ctx))
    .use(
      pushRoutes(
        ctx,
        limits,
        new PushHub(
          {
            clock: ctx.clock,
            changes: ctx.services.changes,
            repo: ctx.repos.changes,
            members: ctx.repos.members,
            items: ctx.repos.items,
            hub: ctx.hub,
            signedIn: (login) => ctx.services.appPasswords.stillSignedIn(login.loginId, login.credential),
          },
          opts.push,
        ),
      ),
    )
    .use(openApiRoutes(() => app.routes))
    .use(webAppRoutes(ctx));
}
