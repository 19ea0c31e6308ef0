import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import type { Item } from '../../src/contract/files.ts';
import { linkCalls } from '../app/team-folders.ts';
import { Dialog, openDialog } from '../ui/dialog.tsx';
import { Icon } from '../ui/icons.tsx';
import { LinkTab } from './link-tab.tsx';
import type { SaveStatus } from './save-status.ts';
import { PeopleSection } from './people.tsx';

export type Part = 'people' | 'link';
const PARTS: { value: Part; label: string; icon: 'users' | 'link' }[] = [
  { value: 'people', label: 'People', icon: 'users' },
  { value: 'link', label: 'Link', icon: 'link' },
];

/** The two parts as tabs: ←/→ move between them, as a tab list should. */
export function PartTabs(props: { part: Part; onPart: (part: Part) => void }) {
  const keyDown = (e: KeyboardEvent) => {
    if (e.key !== 'ArrowLeft' && e.key !== 'ArrowRight') return;
    e.preventDefault();
    const next = props.part === 'people' ? 'link' : 'people';
    props.onPart(next);
    document.getElementById(`share-tab-${next}`)?.focus();
  };
  return (
    <div class="share-tabs" role="tablist" aria-label="Share with" onKeyDown={keyDown}>
      {PARTS.map((p) => (
        <button
          key={p.value}
          id={`share-tab-${p.value}`}
          type="button"
          role="tab"
          aria-selected={props.part === p.value}
          aria-controls={`share-panel-${p.value}`}
          tabIndex={props.part === p.value ? 0 : -1}
          onClick={() => props.onPart(p.value)}
        >
          <Icon name={p.icon} size={18} /> {p.label}
        </button>
      ))}
    </div>
  );
}

/** One line that says what the last change did: every change in this dialog saves as it is made. */
function SaveLine({ status }: { status: SaveStatus | null }) {
  if (status?.kind === 'error')
    return (
      <p class="field-error share-status" role="alert">
        {status.text}
      </p>
    );
  return (
    <p class="muted small share-status" role="status">
      {status ? (status.kind === 'saved' ? `Saved: ${status.text}` : status.text) : 'Changes save as you make them.'}
    </p>
  );
}

/** A share dialog's frame (an item's, an album's): its parts, the save line under them, and Done. */
export function ShareFrame(props: { title: string; status: SaveStatus | null; close: () => void; children: ComponentChildren }) {
  return (
    <Dialog title={props.title} onClose={props.close} wide class="share-dialog">
      <div class="dialog-body share">
        {props.children}
        <SaveLine status={props.status} />
      </div>
      <div class="dialog-actions">
        <button type="button" class="button primary" onClick={props.close}>
          Done
        </button>
      </div>
    </Dialog>
  );
}

function ShareDialog(props: { items: Item[]; part: Part; team: string | undefined; close: () => void }) {
  const only = props.items.length === 1 ? props.items[0]! : null;
  // A team folder's people are its groups, which the admin sets: its administrators get the Link part only.
  const single = props.team ? null : only;
  const [part, setPart] = useState<Part>(single ? props.part : 'link');
  const [status, setStatus] = useState<SaveStatus | null>(null);
  const title = only ? `Share “${only.name}”` : `Share ${props.items.length} items`;
  return (
    <ShareFrame title={title} status={status} close={props.close}>
      {single && <PartTabs part={part} onPart={setPart} />}
      {single && part === 'people' && (
        <div id="share-panel-people" role="tabpanel" aria-labelledby="share-tab-people">
          <PeopleSection item={single} say={setStatus} />
        </div>
      )}
      {part === 'link' && (
        <div id="share-panel-link" role={single ? 'tabpanel' : undefined} aria-labelledby={single ? 'share-tab-link' : undefined}>
          <LinkTab items={props.items} calls={linkCalls(props.team)} team={props.team !== undefined} say={setStatus} close={props.close} />
        </div>
      )}
    </ShareFrame>
  );
}

/**
 * Shares the selected items: People (one item: who on this Coffer has it) and Link (the public links).
 * It opens on `part`, by default People for an item without a link and Link for one that has it;
 * `team`: the items are in a team folder this account administers, whose links are the team's.
 */
export function openShareDialog(items: Item[], opts: { part?: Part; team?: string | undefined } = {}): void {
  const start = opts.part ?? (items.length === 1 && !items[0]!.shared ? 'people' : 'link');
  void openDialog<void>((close) => <ShareDialog items={items} part={start} team={opts.team} close={() => close()} />);
}
