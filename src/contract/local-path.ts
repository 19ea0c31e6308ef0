const BASE = 'http://coffer.invalid';

/**
 * Where to go after sign-in: a path on this origin, else home. The rule of every `next` parameter, on the
 * server and in the web app. The path is checked as the browser will read it (`/.//host`, `/a/..//host`
 * and `/%2e//host` normalise to `//host`, another origin), and that normalised path is what is returned.
 */
export function localPath(next: string | null | undefined): string {
  if (!next?.startsWith('/') || /[\\\u0000-\u001f\u007f]/.test(next)) return '/';
  let url: URL;
  try {
    url = new URL(next, BASE);
  } catch {
    return '/';
  }
  if (url.origin !== BASE) return '/';
  const path = `${url.pathname}${url.search}${url.hash}`;
  return path.startsWith('//') ? '/' : path;
}
