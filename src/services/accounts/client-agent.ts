/** A Nextcloud client as its User-Agent names it: which app, on which platform, which version. */
export interface NextcloudAgent {
  app: string;
  platform: string;
  appVersion: string;
}

const AGENT_MAX = 512;
const DESKTOP_PLATFORMS: Record<string, string> = { linux: 'Linux', windows: 'Windows', macintosh: 'macOS', macos: 'macOS' };

/**
 * The Nextcloud desktop client and `nextcloudcmd` (`Mozilla/5.0 (Linux) mirall/3.7.3 (Nextcloud, debian-…)`),
 * the Android app (`Mozilla/5.0 (Android) Nextcloud-android/3.29.0`) and the iOS app (`… Nextcloud-iOS/5.2.0`);
 * null for any other agent.
 */
export function nextcloudAgent(userAgent: string | null): NextcloudAgent | null {
  if (!userAgent) return null;
  // The clients' agents are short; a long one is read no further, so the patterns below stay cheap.
  const ua = userAgent.slice(0, AGENT_MAX);
  const desktop = /\(([^)]{0,60})\)\s*mirall\/([\w.+-]{1,40})/i.exec(ua);
  if (desktop) {
    const platform = DESKTOP_PLATFORMS[desktop[1]!.trim().toLowerCase()] ?? desktop[1]!.trim().slice(0, 40);
    return { app: 'Nextcloud desktop', platform, appVersion: desktop[2]! };
  }
  const mobile = /Nextcloud-(android|iOS)\/([\w.+-]{1,40})/i.exec(ua);
  if (mobile) {
    const android = mobile[1]!.toLowerCase() === 'android';
    return { app: android ? 'Nextcloud Android' : 'Nextcloud iOS', platform: android ? 'Android' : 'iOS', appVersion: mobile[2]! };
  }
  return null;
}

const NAME_MAX = 100;

const DESKTOP_SIGN_IN = '(Desktop Client - ';
const clean = (text: string) =>
  text
    .normalize('NFC')
    .replace(/[\p{Cc}\p{Cf}]/gu, '')
    .trim();
const shorten = (text: string) => (text.length > NAME_MAX ? `${text.slice(0, NAME_MAX - 1)}…` : text);

/**
 * The name a client's app password gets: the Nextcloud app and its platform (and the computer's name, which
 * the desktop client sends as `<host> (Desktop Client - <platform>)` when it starts signing in, or the phone's),
 * else the agent itself, shortened.
 */
export function clientName(userAgent: string | null): string {
  const text = clean((userAgent ?? '').slice(0, AGENT_MAX));
  const at = text.lastIndexOf(DESKTOP_SIGN_IN);
  if (at >= 0 && text.endsWith(')')) {
    const named = text.slice(at + DESKTOP_SIGN_IN.length, -1).trim();
    const platform = DESKTOP_PLATFORMS[named.toLowerCase()] ?? named.slice(0, 40);
    const host = text.slice(0, at).trim();
    return shorten(host ? `Nextcloud desktop on ${host} (${platform})` : `Nextcloud desktop (${platform})`);
  }
  // The Android app's sign-in web view names the phone: `<maker> <model> (Android)`.
  const phone = /^([^()]{1,60}) \(Android\)$/.exec(text);
  if (phone) return `Nextcloud Android on ${phone[1]!.trim()}`;
  const agent = nextcloudAgent(text);
  if (agent) return agent.app.endsWith(agent.platform) ? agent.app : `${agent.app} (${agent.platform})`;
  return text ? shorten(text) : 'Unnamed client';
}
