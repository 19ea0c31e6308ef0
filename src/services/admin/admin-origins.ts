import type { Clock } from '../../clock.ts';
import type { SettingsRepo } from '../../db/repos/settings.ts';
import { isLoopback } from '../../lib/ip.ts';

const KEY = 'adminOrigins';
/** An admin reaching the box by a handful of names (LAN address, a name, a VPN address) fits; the oldest goes first. */
const MAX_ORIGINS = 16;

/**
 * The origins (scheme, host, port) the admin has used the instance at, recorded from the admin's signed-in
 * requests. Anyone can write a Host header, but only the admin's requests add to this list, so it names
 * addresses the instance is really reached at without configuration (docs/documents.md › Editing documents).
 */
export class AdminOrigins {
  private origins: string[] | null = null;

  constructor(
    private readonly repo: SettingsRepo,
    private readonly clock: Clock,
  ) {}

  /** Records an origin the admin used; a write only the first time it is seen. */
  note(origin: string): void {
    const known = this.list();
    if (known.includes(origin)) return;
    const origins = [...known, origin].slice(-MAX_ORIGINS);
    try {
      this.repo.set(KEY, JSON.stringify(origins), this.clock.now());
    } catch {
      // A write that fails (a full disk, a busy database) is tried again at the admin's next request; this one goes on.
      return;
    }
    this.origins = origins;
  }

  has(origin: string): boolean {
    return this.list().includes(origin);
  }

  /**
   * The origin the admin most recently started using, one other machines can reach when there is one (an admin on the
   * box itself at localhost is no address for a document server elsewhere); null before the admin has signed in at all.
   */
  latest(): string | null {
    const known = this.list();
    return known.findLast((o) => !isLoopback(new URL(o).hostname.replace(/^\[|\]$/g, ''))) ?? known.at(-1) ?? null;
  }

  private list(): string[] {
    if (this.origins === null) {
      const stored = this.repo.get(KEY);
      const parsed: unknown = stored === null ? [] : JSON.parse(stored);
      this.origins = Array.isArray(parsed) ? parsed.filter((o): o is string => typeof o === 'string') : [];
    }
    return this.origins;
  }
}
