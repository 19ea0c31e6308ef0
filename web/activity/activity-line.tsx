import type { ActivityLine } from '../../src/contract/activity.ts';
import { exactDate } from '../app/format.ts';
import { folderPath } from '../app/router.ts';
import { profile } from '../app/session.ts';
import { Icon } from '../ui/icons.tsx';
import { type ActivityGroup, verbOf } from './describe.ts';

const timeFmt = new Intl.DateTimeFormat(undefined, { hour: 'numeric', minute: '2-digit' });

/** Where an item opens: a folder itself, a file in its folder; nothing when the reader cannot see where it is now. */
function hrefOf(line: ActivityLine): string | null {
  if (line.item.path === null) return null;
  return line.item.type === 'folder' ? folderPath(line.item.id) : folderPath(line.folder.id);
}

function ItemName({ line }: { line: ActivityLine }) {
  const href = hrefOf(line);
  const name = line.item.name ?? 'an item';
  return href ? (
    <a href={href} class="activity-item" title={line.item.path ?? undefined}>
      {name}
    </a>
  ) : (
    <span class="activity-item">{name}</span>
  );
}

function FolderName({ line }: { line: ActivityLine }) {
  if (line.folder.path === null) return <span>a folder</span>;
  return <a href={folderPath(line.folder.id)}>{line.folder.path || 'My files'}</a>;
}

/** One line of the feed: who did what to which item (or how many files to which folder), and when. */
export function ActivityEntry({ group }: { group: ActivityGroup }) {
  const first = group.lines[0]!;
  const who = first.actor.kind === 'login' && first.actor.id === profile.value?.id ? 'You' : first.actor.name;
  const many = group.lines.length > 1;
  return (
    <li class="activity-entry">
      <Icon name={first.actor.kind === 'login' ? 'user' : first.actor.kind === 'link' ? 'link' : 'server'} size={18} />
      <p>
        <strong>{who}</strong> {verbOf(group)}{' '}
        {many ? (
          <FolderName line={first} />
        ) : (
          <>
            <ItemName line={first} />
            {first.kind === 'item.renamed' && first.before && <span class="muted"> (was {first.before.name})</span>}
            {first.kind === 'item.moved' && (
              <>
                {' '}
                to <FolderName line={first} />
              </>
            )}
          </>
        )}
        {many && (
          <span class="activity-names muted">
            {group.lines
              .slice(0, 3)
              .map((l) => l.item.name)
              .join(', ')}
            {group.lines.length > 3 ? ', …' : ''}
          </span>
        )}
      </p>
      <time dateTime={first.at} title={exactDate(first.at)} class="muted small">
        {timeFmt.format(new Date(first.at))}
      </time>
    </li>
  );
}
