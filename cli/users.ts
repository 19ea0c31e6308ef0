import type { Command } from 'commander';
import type { AppContext } from '../src/context.ts';
import { emailKey } from '../src/services/accounts/email.ts';
import { formatSize, parseSize } from '../src/contract/size.ts';
import { action, adminCommand, print, printJson, readLine, readSecret, serverOrigin, table, UsageError, withContext } from './common.ts';

interface Flags {
  dataDir?: string;
  json?: boolean;
}

type Login = NonNullable<ReturnType<AppContext['services']['accounts']['findByEmail']>>;

function loginByEmail(ctx: AppContext, address: string): Login {
  const row = ctx.services.accounts.findByEmail(address);
  if (!row) throw new UsageError(`no user with email ${address}`);
  return row;
}

// The schema is loaded when a command checks an address: help and the other commands start without zod.
async function requireEmail(address: string): Promise<void> {
  const { EMAIL } = await import('../src/contract/accounts.ts');
  if (!EMAIL.safeParse(address).success) throw new UsageError(`not a valid email address: ${address}`);
}

export function registerUsers(program: Command): void {
  const users = program
    .command('users')
    .description('list accounts, create or invite one, reset a password or MFA, set a storage limit, disable or delete one');

  adminCommand(users.command('list').description('every account: owners, each followed by its sub-users')).action(
    action((opts: Flags) =>
      withContext(opts, (ctx) => {
        const all = [];
        let cursor: string | undefined;
        do {
          const page = ctx.services.users.list({ limit: 100, cursor });
          all.push(...page.users);
          cursor = page.nextCursor ?? undefined;
        } while (cursor);
        if (opts.json) return printJson({ users: all });
        if (all.length === 0) return print('no accounts yet: create the admin with `coffer users create <email> --admin`');
        const admins = new Set(all.filter((u) => ctx.services.accounts.findById(u.id)?.isAdmin).map((u) => u.id));
        print(
          table(
            ['EMAIL', 'NAME', 'ROLE', 'STATE', 'MFA', 'USED', 'LIMIT', 'CREATED'],
            all.map((u) => [
              u.parentUserId ? `  ${u.email}` : u.email,
              u.name,
              admins.has(u.id) ? 'admin' : u.parentUserId ? 'sub-user' : 'owner',
              u.deletionPending ? 'deleting' : u.disabled ? 'disabled' : 'active',
              u.mfaEnabled ? 'on' : 'off',
              u.parentUserId ? '' : formatSize(u.storageUsed),
              u.parentUserId ? '' : u.storageTotal === null ? 'none' : formatSize(u.storageTotal),
              u.createdAt.slice(0, 10),
            ]),
          ),
        );
      }),
    ),
  );

  adminCommand(
    users.command('shares <email>').description("the account's items shared with other accounts (members) and their roles"),
  ).action(
    action((address: string, opts: Flags) =>
      withContext(opts, (ctx) => {
        const row = loginByEmail(ctx, address);
        const ownerId = row.parentUserId ?? row.id;
        const shares = ctx.services.members.sharesOf(ownerId);
        if (opts.json) return printJson({ shares });
        if (shares.length === 0) return print(`${row.email} shares nothing with other accounts`);
        print(
          table(
            ['ITEM', 'ITEM ID', 'MEMBER', 'ROLE', 'SINCE'],
            shares.map((s) => [s.itemName, s.itemId, s.email, s.role, s.addedAt.slice(0, 10)]),
          ),
        );
      }),
    ),
  );

  adminCommand(
    users
      .command('create <email>')
      .description('create an account; the password is prompted for, or read from the first line of stdin')
      .option('--name <name>', 'display name', '')
      .option('--admin', 'make it the admin (only while no admin exists, e.g. on a fresh instance)'),
  ).action(
    action(async (address: string, opts: Flags & { name: string; admin?: boolean }) => {
      await requireEmail(address);
      await withContext(opts, async (ctx) => {
        const password = await readSecret(`Password for ${address}`, { confirm: true });
        const row = await ctx.services.accounts.createLogin(
          { email: address, password, name: opts.name, admin: opts.admin, emailTrusted: true },
          'cli',
        );
        if (opts.json) return printJson({ user: { id: row.id, email: row.email, name: row.name, admin: Boolean(row.isAdmin) } });
        print(`created ${row.isAdmin ? 'admin' : 'account'} ${row.email} (id ${row.id})`);
      });
    }),
  );

  adminCommand(
    users
      .command('invite <email>')
      .description('invite someone: prints a one-time link, valid 7 days, on which they choose their password')
      .option('--name <name>', 'display name', '')
      .option('--storage-limit <size>', 'their storage limit, e.g. 10G (default: the instance default)'),
  ).action(
    action(async (address: string, opts: Flags & { name: string; storageLimit?: string }) => {
      await requireEmail(address);
      const storageLimit = opts.storageLimit === undefined ? null : parseSize(opts.storageLimit);
      if (opts.storageLimit !== undefined && (storageLimit === null || storageLimit <= 0))
        throw new UsageError(`not a size: "${opts.storageLimit}" (use e.g. 10G or 500M)`);
      return withContext(opts, async (ctx) => {
        const { invitation, token } = await ctx.services.invitations.invite({ email: address, name: opts.name, storageLimit }, 'cli');
        const { invitationUrl } = await import('../src/services/accounts/invitations.ts');
        const url = invitationUrl(serverOrigin(ctx.config), token);
        if (opts.json) return printJson({ invitation, url });
        print(`invitation for ${invitation.email}, valid until ${invitation.expiresAt.slice(0, 16).replace('T', ' ')} UTC; it works once:`);
        print(url);
      });
    }),
  );

  adminCommand(
    users
      .command('reset-password <email>')
      .description('set a new password (prompted, or the first line of stdin) and sign the user out everywhere'),
  ).action(
    action(async (address: string, opts: Flags) => {
      await withContext(opts, async (ctx) => {
        const row = loginByEmail(ctx, address);
        const password = await readSecret(`New password for ${row.email}`, { confirm: true });
        await ctx.services.accounts.setPassword(row.id, password, 'cli');
        if (opts.json) return printJson({ id: row.id, email: row.email, passwordReset: true, sessionsRevoked: true });
        print(`password of ${row.email} reset; all of its sessions were signed out`);
      });
    }),
  );

  adminCommand(
    users
      .command('reset-mfa <email>')
      .description('turn two-factor authentication off and remove the passkeys of a user who lost their authenticator'),
  ).action(
    action((address: string, opts: Flags) =>
      withContext(opts, (ctx) => {
        const row = loginByEmail(ctx, address);
        ctx.services.mfa.reset(row.id, 'cli');
        const passkeysRemoved = ctx.services.passkeys.removeAll(row.id, 'cli');
        if (opts.json) {
          return printJson({ id: row.id, email: row.email, mfaEnabled: false, wasEnabled: Boolean(row.mfaEnabled), passkeysRemoved });
        }
        const passkeys = passkeysRemoved ? `; ${passkeysRemoved} passkey${passkeysRemoved === 1 ? '' : 's'} removed` : '';
        print(
          row.mfaEnabled || passkeysRemoved
            ? `two-factor authentication turned off for ${row.email}${passkeys}`
            : `${row.email} had no two-factor authentication or passkeys; nothing changed`,
        );
      }),
    ),
  );

  adminCommand(
    users
      .command('set-limit <email> <size>')
      .description('set an account\'s storage limit: a size such as 10G or 500M, or "none" for the instance default'),
  ).action(
    action((address: string, size: string, opts: Flags) =>
      withContext(opts, (ctx) => {
        const row = loginByEmail(ctx, address);
        let limit: number | null = null;
        if (size.toLowerCase() !== 'none') {
          limit = parseSize(size);
          if (limit === null || limit <= 0) throw new UsageError(`not a size: "${size}" (use e.g. 10G, 500M, or none)`);
        }
        const result = ctx.services.users.setStorageLimit(row.id, limit, 'cli');
        if (opts.json) return printJson({ id: row.id, email: row.email, ...result });
        print(`storage limit of ${row.email}: ${limit === null ? 'the instance default' : formatSize(limit)}`);
      }),
    ),
  );

  adminCommand(
    users
      .command('confirm-email <email>')
      .description(
        "vouch that the login's address is its person's (one typed at sign-up or by an owner): single sign-on may then link it by email",
      ),
  ).action(
    action((address: string, opts: Flags) =>
      withContext(opts, (ctx) => {
        const result = ctx.services.users.confirmEmail(loginByEmail(ctx, address).id, 'cli');
        if (opts.json) return printJson({ id: result.id, email: result.email, emailConfirmed: true });
        print(result.changed ? `the address ${result.email} is confirmed` : `the address ${result.email} was confirmed already`);
      }),
    ),
  );

  for (const disabled of [true, false]) {
    const verb = disabled ? 'disable' : 'enable';
    adminCommand(
      users
        .command(`${verb} <email>`)
        .description(
          disabled
            ? 'stop an account and its sub-users from signing in; their sessions end at once (files are kept)'
            : 'let a disabled account and its sub-users sign in again',
        ),
    ).action(
      action((address: string, opts: Flags) =>
        withContext(opts, (ctx) => {
          const result = ctx.services.users.setDisabled(loginByEmail(ctx, address).id, disabled, 'cli');
          if (opts.json) return printJson(result);
          print(disabled ? `${result.email} disabled; its sessions were signed out` : `${result.email} enabled`);
        }),
      ),
    );
  }

  adminCommand(
    users
      .command('delete <email>')
      .description("delete an account: its files go to the trash and are purged by the server's job queue, then its logins")
      .option('--confirm <email>', 'the same email again, to confirm without a prompt (scripts)')
      .addHelpText(
        'after',
        `
The account is disabled and signed out at once; the running server (or its next start) then removes its
files, frees its usage and deletes the account and its sub-users. The audit log keeps its history. The
first admin cannot be deleted. On a terminal the email is asked for again as confirmation.`,
      ),
  ).action(
    action(async (address: string, opts: Flags & { confirm?: string }) => {
      await withContext(opts, async (ctx) => {
        const row = loginByEmail(ctx, address);
        const typed = opts.confirm ?? (await readLine(`Type the email of the account to delete it and all of its files (${row.email}): `));
        if (emailKey(typed) !== row.emailKey) throw new UsageError('the email typed does not match; nothing was deleted');
        const result = await ctx.services.users.requestDeletion(row.id, 'cli');
        if (opts.json) return printJson({ id: row.id, email: row.email, ...result });
        print(`${row.email} is disabled and queued for deletion (job ${result.jobId}): the server removes its files in the background`);
      });
    }),
  );
}
