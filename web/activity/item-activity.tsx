import type { Item } from '../../src/contract/files.ts';
import { ActivityFeed } from './activity-feed.tsx';

/** The Activity tab of a file's or folder's details: its own history (a folder's includes what changed inside it). */
export function ItemActivity({ item }: { item: Item }) {
  return (
    <div class="item-activity">
      <ActivityFeed label={`Activity of ${item.name}`} filters={item.type === 'folder' ? { folderId: item.id } : { itemId: item.id }} />
    </div>
  );
}
