import type { Command } from 'commander';
import { action, adminCommand, intOption, print, printJson, table, UsageError, withContext } from './common.ts';

const UNITS: Record<string, number> = { m: 60_000, h: 3600_000, d: 86400_000, w: 7 * 86400_000 };

/** `24h`, `7d`, `30m`, `2w` before now, or an ISO date/time. */
export function parseSince(text: string, now: number): number {
  const rel = /^(\d+)\s*([mhdw])$/i.exec(text.trim());
  if (rel) return now - Number(rel[1]) * UNITS[rel[2]!.toLowerCase()]!;
  const t = Date.parse(text);
  if (Number.isNaN(t)) throw new UsageError(`--since takes a duration such as 24h or 7d, or a date such as 2026-01-31, got "${text}"`);
  return t;
}

export function registerAudit(program: Command): void {
  const audit = program.command('audit').description('the audit log: sign-ins, changes, file and share actions, denied requests');
  adminCommand(
    audit
      .command('list')
      .description('newest first')
      .option('--since <when>', 'only events since a duration ago (24h, 7d) or a date (2026-01-31)')
      .option('--action <name>', 'one action (auth.sign_in) or a group (auth, file, orphans)')
      .option('--user <email|id>', 'only events of this login')
      .option('--request-id <id>', 'only events of one request (the requestId of its access log line)')
      .option('--limit <n>', 'at most this many events (default 100)'),
  ).action(
    action(
      (opts: { dataDir?: string; json?: boolean; since?: string; action?: string; user?: string; requestId?: string; limit?: string }) =>
        withContext(opts, (ctx) => {
          const { audit: service, accounts } = ctx.services;
          const since = opts.since === undefined ? undefined : parseSince(opts.since, ctx.clock.now());
          const limit = intOption('--limit', opts.limit, 1, 100_000) ?? 100;
          const user = opts.user ? (accounts.findByEmail(opts.user)?.id ?? opts.user) : undefined;
          // Events queued by this or another process are written first, so the list is current.
          service.flush();
          const entries = service.list({ since, action: opts.action, user, requestId: opts.requestId, limit });
          if (opts.json) return printJson({ events: entries });
          if (entries.length === 0) return print('no audit events match');
          print(
            table(
              ['TIME', 'ACTION', 'STATUS', 'WHO', 'IP', 'TARGET', 'DETAILS'],
              entries.map((e) => [
                e.at,
                e.action,
                e.status,
                e.email ?? (e.actor === 'cli' || e.actor === 'system' ? e.actor : '-'),
                e.ip ?? '-',
                e.targetType ? `${e.targetType}${e.targetId ? `:${e.targetId}` : ''}` : '-',
                e.details ? JSON.stringify(e.details) : '',
              ]),
            ),
          );
        }),
    ),
  );
}
