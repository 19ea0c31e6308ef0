import type { ActivityLine } from '../../src/contract/activity.ts';
import { plural } from '../app/format.ts';

/** What each kind of change reads as after the person's name; `files` the grouped form ("uploaded 3 files"). */
export const KINDS: Record<string, { label: string; verb: string; files?: string }> = {
  'item.created': { label: 'Folders made', verb: 'created' },
  'item.uploaded': { label: 'Uploads', verb: 'uploaded', files: 'uploaded' },
  'item.dropped': { label: 'Files received by link', verb: 'sent through a link', files: 'sent through a link' },
  'item.replaced': { label: 'New content', verb: 'updated' },
  'item.touched': { label: 'Modified times set', verb: 'set the modified time of' },
  'item.renamed': { label: 'Renames', verb: 'renamed' },
  'item.moved': { label: 'Moves', verb: 'moved' },
  'item.copied': { label: 'Copies', verb: 'copied' },
  'item.trashed': { label: 'Moved to trash', verb: 'moved to the trash' },
  'item.restored': { label: 'Restored from trash', verb: 'restored' },
  'item.purged': { label: 'Deleted permanently', verb: 'deleted permanently' },
  'item.version_restored': { label: 'Versions restored', verb: 'restored an earlier version of' },
  'link.created': { label: 'Links shared', verb: 'shared a link to' },
  'link.removed': { label: 'Links removed', verb: 'removed the link to' },
  'member.added': { label: 'Shared with people', verb: 'shared with people:' },
  'member.removed': { label: 'Stopped sharing', verb: 'stopped sharing with someone:' },
};

/** Consecutive lines shown as one: uploads by the same person to the same folder. */
export interface ActivityGroup {
  key: string;
  lines: ActivityLine[];
}

const groupable = (l: ActivityLine) => KINDS[l.kind]?.files !== undefined;

/** Runs of uploads by one person into one folder become one group; every other line is its own. */
export function groupLines(lines: ActivityLine[]): ActivityGroup[] {
  const groups: ActivityGroup[] = [];
  for (const line of lines) {
    const last = groups.at(-1)?.lines[0];
    if (last && groupable(line) && last.kind === line.kind && last.actor.id === line.actor.id && last.folder.id === line.folder.id)
      groups.at(-1)!.lines.push(line);
    else groups.push({ key: String(line.seq), lines: [line] });
  }
  return groups;
}

/** The verb of a group: "uploaded 3 files to", or the kind's own for one line. */
export function verbOf(group: ActivityGroup): string {
  const first = group.lines[0]!;
  const kind = KINDS[first.kind];
  if (group.lines.length > 1 && kind?.files) return `${kind.files} ${plural(group.lines.length, 'file')} to`;
  return kind?.verb ?? first.kind;
}

const dayFmt = new Intl.DateTimeFormat(undefined, { weekday: 'long', day: 'numeric', month: 'long', year: 'numeric' });

/** "Today", "Yesterday" or the date: the heading of a day's changes. */
function dayLabel(iso: string, now = new Date()): string {
  const d = new Date(iso);
  const start = (x: Date) => new Date(x.getFullYear(), x.getMonth(), x.getDate()).getTime();
  const days = Math.round((start(now) - start(d)) / 86_400_000);
  return days === 0 ? 'Today' : days === 1 ? 'Yesterday' : dayFmt.format(d);
}

/** Groups under their day, newest first. */
export function byDay(groups: ActivityGroup[]): Array<{ day: string; groups: ActivityGroup[] }> {
  const days: Array<{ day: string; groups: ActivityGroup[] }> = [];
  for (const g of groups) {
    const day = dayLabel(g.lines[0]!.at);
    if (days.at(-1)?.day === day) days.at(-1)!.groups.push(g);
    else days.push({ day, groups: [g] });
  }
  return days;
}
