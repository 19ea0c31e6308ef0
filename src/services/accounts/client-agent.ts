/** A Nextcloud client as its User-Agent names it: which app, on which platform, which version. */
export interface NextcloudAgent {
  app: string;
  platform: string;
  appVersion: string;
}

const DESKTOP_PLATFORMS: Record<string, string> = { linux: 'Linux', windows: 'Windows', macintosh: 'macOS', macos: 'macOS' };

/**
 * The Nextcloud desktop client and `nextcloudcmd` (`Mozilla/5.0 (Linux) mirall/3.7.3 (Nextcloud, debian-…)`),
 * the Android app (`Mozilla/5.0 (Android) Nextcloud-android/3.29.0`) and the iOS app (`… Nextcloud-iOS/5.2.0`);
 * null for any other agent.
 */
export function nextcloudAgent(userAgent: string | null): NextcloudAgent | null {
  if (!userAgent) return null;
  const desktop = /\(([^)]*)\)\s*mirall\/([\w.+-]{1,40})/i.exec(userAgent);
  if (desktop) {
    const platform = DESKTOP_PLATFORMS[desktop[1]!.trim().toLowerCase()] ?? desktop[1]!.trim().slice(0, 40);
    return { app: 'Nextcloud desktop', platform, appVersion: desktop[2]! };
  }
  const mobile = /Nextcloud-(android|iOS)\/([\w.+-]{1,40})/i.exec(userAgent);
  if (mobile) {
    const android = mobile[1]!.toLowerCase() === 'android';
    return { app: android ? 'Nextcloud Android' : 'Nextcloud iOS', platform: android ? 'Android' : 'iOS', appVersion: mobile[2]! };
  }
  return null;
}

const NAME_MAX = 100;

/** The name a client's app password gets: the Nextcloud app and its platform, else the agent itself, shortened. */
export function clientName(userAgent: string | null): string {
  const agent = nextcloudAgent(userAgent);
  if (agent) return agent.app.endsWith(agent.platform) ? agent.app : `${agent.app} (${agent.platform})`;
  const text = (userAgent ?? '').replace(/[\p{Cc}\p{Cf}]/gu, '').trim();
  if (!text) return 'Unnamed client';
  return text.length > NAME_MAX ? `${text.slice(0, NAME_MAX - 1)}…` : text;
}
