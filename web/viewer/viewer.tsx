import type { ReadonlySignal } from '@preact/signals';
import { useEffect, useState } from 'preact/hooks';
import type { Item } from '../../src/contract/files.ts';
import { api } from '../api/index.ts';
import { displayName, formatSize } from '../app/format.ts';
import { can, hideExtensions } from '../app/session.ts';
import { InfoPanel } from '../files/info-panel.tsx';
import { Dialog, openDialog } from '../ui/dialog.tsx';
import { Icon, type IconName } from '../ui/icons.tsx';
import { NoPreview, PdfPreview, TextPreview } from './documents.tsx';
import { Filmstrip } from './filmstrip.tsx';
import { kindOf, tooLarge } from './kinds.ts';
import { MediaPreview } from './media.tsx';
import { preloadAround } from './preload.ts';
import { ZoomImage } from './zoom-image.tsx';
import './viewer.css';

function Body({ item, find, onSwipe }: { item: Item; find?: string; onSwipe: (dir: 1 | -1) => void }) {
  if (!can('files.download'))
    return <NoPreview item={item} reason="Previews need the Download permission. Ask the account owner to enable it." />;
  switch (kindOf(item)) {
    case 'image':
      // A new image is a new element: no frame shows the last one's picture under the new name.
      return <ZoomImage key={item.id} item={item} onSwipe={onSwipe} />;
    case 'video':
    case 'audio':
      return <MediaPreview item={item} video={kindOf(item) === 'video'} />;
    case 'pdf':
      return <PdfPreview item={item} find={find} />;
    case 'text':
      return <TextPreview item={item} find={find} />;
    default:
      return <NoPreview item={item} reason={tooLarge(item) ?? 'There is no preview for this kind of file.'} />;
  }
}

/** A file manager action offered beside Download for the file shown (share, move to trash, get info). */
interface ViewerTool {
  id: string;
  label: string;
  icon: IconName;
  /** The file leaves the view (moved to the trash): the viewer goes on to the next one. */
  removes?: boolean;
  run: () => unknown;
}

/** The file manager's actions for the file shown; `toggleInfo` opens its details beside the picture. */
export type ViewerTools = (item: Item, toggleInfo: () => void) => ViewerTool[];

function Viewer(props: {
  files: Item[];
  start: number;
  find?: string;
  tools?: ViewerTools;
  /** The list it was opened from, as it changes: a file that leaves it (trashed on another device) leaves the viewer. */
  present?: ReadonlySignal<Item[]>;
  close: () => void;
}) {
  const { start, find, close } = props;
  const [files, setFiles] = useState(props.files);
  const [at, setAt] = useState(start);
  // Only files the list held when the viewer opened are followed: one opened from elsewhere (Recent) stays.
  const [followed] = useState(() => new Set(props.present?.peek().map((i) => i.id)));
  const present = props.present?.value;
  useEffect(() => {
    if (!present) return;
    const ids = new Set(present.map((i) => i.id));
    const stays = (f: Item) => !followed.has(f.id) || ids.has(f.id);
    const kept = files.filter(stays);
    if (kept.length === files.length) return;
    if (kept.length === 0) return close();
    // The file shown, or when it left, the one after it (else the last).
    const before = files.slice(0, at).filter(stays).length;
    setFiles(kept);
    setAt(stays(files[at]!) ? before : Math.min(before, kept.length - 1));
  }, [present]);
  const [info, setInfo] = useState(false);
  const item = files[at]!;
  // From the index the viewer is at when the step is made: keys pressed faster than renders all count.
  const goTo = (index: number | ((at: number) => number)) =>
    setAt((now) => {
      const next = Math.min(files.length - 1, Math.max(0, typeof index === 'number' ? index : index(now)));
      if (next !== now) performance.mark('viewer:step', { detail: files[next]!.id });
      return next;
    });
  const go = (d: 1 | -1) => goTo((now) => now + d);
  const tools = props.tools?.(item, () => setInfo((o) => !o)) ?? [];
  const use = (tool: ViewerTool) => {
    void tool.run();
    if (!tool.removes) return;
    if (files.length === 1) return close();
    setFiles(files.filter((f) => f.id !== item.id));
    setAt(Math.min(at, files.length - 2));
  };
  useEffect(() => preloadAround(files, at), [files, at]);
  useEffect(() => {
    const keys = (e: KeyboardEvent) => {
      if ((e.target as HTMLElement).closest('video, audio, pre')) return;
      // A dialog opened from here (Share) has the keys while it is on top.
      if (![...document.querySelectorAll('dialog[open]')].at(-1)?.classList.contains('viewer')) return;
      if (e.key === 'ArrowRight') go(1);
      else if (e.key === 'ArrowLeft') go(-1);
      else if (e.key === 'Home') goTo(0);
      else if (e.key === 'End') goTo(files.length - 1);
      else if (e.key === 'i' && !e.ctrlKey && !e.metaKey && !e.altKey) setInfo((o) => !o);
      else return;
      e.preventDefault();
    };
    addEventListener('keydown', keys);
    return () => removeEventListener('keydown', keys);
  }, [files]);
  return (
    <Dialog title={displayName(item.name, item.type, hideExtensions.value)} onClose={close} class="preview viewer">
      <div class="preview-bar">
        <span class="viewer-counter" aria-live="polite">
          {at + 1} of {files.length}
          <span class="viewer-size"> · {formatSize(item.size ?? 0)}</span>
        </span>
        <div class="preview-tools">
          {can('files.download') && (
            <a class="button ghost" href={api.files.downloadUrl(item)} download>
              <Icon name="download" size={18} /> <span class="tool-label">Download</span>
            </a>
          )}
          {tools.map((tool) => (
            <button
              type="button"
              key={tool.id}
              class="icon-button"
              aria-label={tool.label}
              title={tool.label}
              aria-pressed={tool.id === 'info' ? info : undefined}
              onClick={() => use(tool)}
            >
              <Icon name={tool.icon} size={20} />
            </button>
          ))}
        </div>
      </div>
      <div class="preview-body">
        <div class="preview-main">
          <Body item={item} find={at === start ? find : undefined} onSwipe={go} />
          {at > 0 && (
            <button type="button" class="preview-nav prev" aria-label="Previous" onClick={() => go(-1)}>
              <Icon name="chevronLeft" size={28} />
            </button>
          )}
          {at < files.length - 1 && (
            <button type="button" class="preview-nav next" aria-label="Next" onClick={() => go(1)}>
              <Icon name="chevronRight" size={28} />
            </button>
          )}
        </div>
        {info && <InfoPanel item={item} onClose={() => setInfo(false)} />}
      </div>
      <Filmstrip files={files} at={at} go={goTo} />
    </Dialog>
  );
}

/**
 * Opens the viewer on one file, with next/previous through the other files around it; `find` opens text
 * and PDF at those words; `tools` adds the file manager's actions beside Download.
 */
export function openViewer(files: Item[], item: Item, find?: string, tools?: ViewerTools, present?: ReadonlySignal<Item[]>): void {
  const start = Math.max(
    0,
    files.findIndex((f) => f.id === item.id),
  );
  const list = files.length ? files : [item];
  void openDialog<void>((close) => <Viewer files={list} start={start} find={find} tools={tools} present={present} close={() => close()} />);
}
