import type { Command } from 'commander';
import type { AppContext } from '../src/context.ts';
import type { GroupView } from '../src/contract/groups.ts';
import { action, adminCommand, print, printJson, table, UsageError, withContext } from './common.ts';

interface Flags {
  dataDir?: string;
  json?: boolean;
}

const cli = { cli: true } as const;

function groupByRef(ctx: AppContext, ref: string): GroupView {
  const group = ctx.services.groups.find(ref);
  if (!group) throw new UsageError(`no group named ${ref}`);
  return group;
}

export function registerGroups(program: Command): void {
  const groups = program.command('groups').description('list groups of accounts, create one, add or remove a member, delete one');

  adminCommand(groups.command('list [group]').description('every group, or the members of one (by name or id)')).action(
    action((ref: string | undefined, opts: Flags) =>
      withContext(opts, (ctx) => {
        if (ref) {
          const detail = ctx.services.groups.get(cli, groupByRef(ctx, ref).id);
          if (opts.json) return printJson(detail);
          if (detail.members.length === 0)
            return print(`${detail.name} has no members yet: add one with \`coffer groups add "${detail.name}" <email>\``);
          return print(
            table(
              ['EMAIL', 'NAME', 'ROLE', 'SINCE'],
              detail.members.map((m) => [m.email, m.name, m.admin ? 'group admin' : 'member', m.addedAt.slice(0, 10)]),
            ),
          );
        }
        const all = ctx.services.groups.list();
        if (opts.json) return printJson({ groups: all });
        if (all.length === 0) return print('no groups yet: create one with `coffer groups create <name>`');
        print(
          table(
            ['NAME', 'ID', 'SOURCE', 'MEMBERS', 'SHARED ITEMS', 'CREATED'],
            all.map((g) => [g.name, g.id, g.source, String(g.size), String(g.items), g.createdAt.slice(0, 10)]),
          ),
        );
      }),
    ),
  );

  adminCommand(groups.command('create <name>').description('a new group (1 to 64 characters, unique whatever the case)'))
    .option('--description <text>', 'what the group is for')
    .option('--from-sign-on', "single sign-on sets its members from the provider's groups claim (OIDC_GROUPS_CLAIM)")
    .action(
      action((name: string, opts: Flags & { description?: string; fromSignOn?: boolean }) =>
        withContext(opts, (ctx) => {
          const group = ctx.services.groups.create(cli, { name, description: opts.description, source: opts.fromSignOn ? 'idp' : 'admin' });
          if (opts.json) return printJson(group);
          print(`created group ${group.name} (${group.id})`);
        }),
      ),
    );

  adminCommand(
    groups.command('add <group> <email>').description('add an account to a group: it reaches what is shared with the group at once'),
  )
    .option('--admin', 'make it a group administrator (adds and removes the group’s members)')
    .action(
      action((ref: string, email: string, opts: Flags & { admin?: boolean }) =>
        withContext(opts, (ctx) => {
          const group = groupByRef(ctx, ref);
          const { member } = ctx.services.groups.addMember(cli, group.id, email, opts.admin ?? false);
          if (opts.json) return printJson({ member });
          print(`added ${member.email} to ${group.name}${member.admin ? ' as group administrator' : ''}`);
        }),
      ),
    );

  adminCommand(
    groups.command('remove <group> <email>').description('remove an account from a group: what the group gave it ends at once'),
  ).action(
    action((ref: string, email: string, opts: Flags) =>
      withContext(opts, (ctx) => {
        const group = groupByRef(ctx, ref);
        const account = ctx.services.accounts.findByEmail(email);
        if (!account) throw new UsageError(`no user with email ${email}`);
        const result = ctx.services.groups.removeMember(cli, group.id, account.id);
        if (opts.json) return printJson(result);
        print(result.message);
      }),
    ),
  );

  adminCommand(
    groups.command('delete <group>').description('delete a group: its members lose what was shared with it; the items stay their owners’'),
  ).action(
    action((ref: string, opts: Flags) =>
      withContext(opts, (ctx) => {
        const result = ctx.services.groups.remove(cli, groupByRef(ctx, ref).id);
        if (opts.json) return printJson(result);
        print(result.message);
      }),
    ),
  );
}
