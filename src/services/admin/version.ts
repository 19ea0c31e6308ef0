import pkg from '../../../package.json' with { type: 'json' };
import type { Infrastructure } from '../infrastructure.ts';
import { AppError, Messages } from '../../errors.ts';

export const BACKEND_VERSION: string = pkg.version;

// Set by `npm run build` (bun build --define); absent when running from source.
declare const COFFER_BUILD_COMMIT: string | undefined;
declare const COFFER_BUILD_DATE: string | undefined;

/** The checkout's commit when running from source (`-dirty` with uncommitted changes), else null. */
export function sourceCommit(): string | null {
  const git = (args: string[]) => {
    const r = Bun.spawnSync(['git', ...args], { cwd: import.meta.dir, stdout: 'pipe', stderr: 'ignore' });
    return r.exitCode === 0 ? r.stdout.toString().trim() : null;
  };
  try {
    const commit = git(['rev-parse', '--short=12', 'HEAD']);
    if (!commit) return null;
    return git(['status', '--porcelain', '--untracked-files=no']) ? `${commit}-dirty` : commit;
  } catch {
    return null;
  }
}

let commitOfSource: string | null | undefined;

/** The commit this executable was built from, or the checkout's when running from source (asked of git once); else null. */
function buildCommit(): string | null {
  if (typeof COFFER_BUILD_COMMIT === 'string') return COFFER_BUILD_COMMIT === 'unknown' ? null : COFFER_BUILD_COMMIT;
  if (commitOfSource === undefined) commitOfSource = sourceCommit();
  return commitOfSource;
}

/**
 * The version with the build's commit (`0.1.0+1a2b3c4d5e6f`), as a database records the Coffer that last ran on it and an
 * upgrade's snapshot is named: every build says 0.1.0, the commit tells them apart. Just the version when no commit is known.
 */
export function buildVersion(): string {
  const commit = buildCommit();
  return commit ? `${BACKEND_VERSION}+${commit}` : BACKEND_VERSION;
}

/** `coffer --version`: version, commit, build date and runtime on one line (install.sh prints it as it is). */
export function versionLine(): string {
  const built = typeof COFFER_BUILD_DATE === 'string';
  const commit = buildCommit() ?? 'unknown';
  const date = built ? `built ${COFFER_BUILD_DATE}` : 'run from source';
  return `${BACKEND_VERSION} (commit ${commit}, ${date}, Bun ${Bun.version} ${process.platform}-${process.arch})`;
}

const FEED_TIMEOUT_MS = 10_000;

export class VersionService {
  constructor(
    private readonly ctx: Pick<Infrastructure, 'config' | 'log'>,
    private readonly feedTimeoutMs = FEED_TIMEOUT_MS,
  ) {}

  /** This server's version, and whether an update feed is set (so a client need not ask `latest()` only to be refused). */
  current(): { backend: string; updateFeed: boolean } {
    return { backend: BACKEND_VERSION, updateFeed: Boolean(this.ctx.config.updateFeedUrl) };
  }

  /**
   * The update feed's answer, passed through unchanged ({frontend, backend, desktop}). No feed
   * configured, a timeout, an error status or a body that is not a JSON object: 502, whose
   * `configured` (a widening of docs/api.md › Monitoring and version) tells "not set up" from "set up but not answering".
   */
  async latest(): Promise<Record<string, unknown>> {
    const url = this.ctx.config.updateFeedUrl;
    if (!url) throw new AppError(502, Messages.updateFeedUnavailable, { configured: false });
    try {
      const res = await fetch(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(this.feedTimeoutMs) });
      if (!res.ok) throw new Error(`status ${res.status}`);
      const body = (await res.json()) as unknown;
      if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new Error('not a JSON object');
      return body as Record<string, unknown>;
    } catch (err) {
      this.ctx.log.warn('update feed request failed', { url, err: err instanceof Error ? err.message : String(err) });
      throw new AppError(502, Messages.updateFeedUnavailable, { configured: true });
    }
  }
}
