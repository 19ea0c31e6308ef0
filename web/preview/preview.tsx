import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api/index.ts';
import { request } from '../app/api.ts';
import type { Item } from '../../src/contract/files.ts';
import { displayName, familyOf, formatSize } from '../app/format.ts';
import { can, hideExtensions } from '../app/session.ts';
import { openInEditor, opensInEditor } from '../app/editor.ts';
import { Dialog, openDialog } from '../ui/dialog.tsx';
import { FileIcon, Icon, type IconName } from '../ui/icons.tsx';
import { InfoPanel } from '../files/info-panel.tsx';

const TEXT_LIMIT = 1024 * 1024;
const PDF_LIMIT = 200 * 1024 * 1024;

type Kind = 'image' | 'video' | 'audio' | 'pdf' | 'text' | 'none';

// Types a browser shows by itself: the original is loaded for them when zoomed in.
const BROWSER_IMAGES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp', 'image/avif', 'image/bmp']);

const textLike = (item: Item) => ['text', 'code'].includes(familyOf(item)) || (item.mimeType ?? '').startsWith('text/');

/** Why a file of a previewable kind is not previewed: its size, said with the limit. */
function tooLarge(item: Item): string | null {
  const size = item.size ?? 0;
  if (familyOf(item) === 'pdf' && size > PDF_LIMIT)
    return `PDFs over ${formatSize(PDF_LIMIT)} are not previewed; this one is ${formatSize(size)}.`;
  if (textLike(item) && size > TEXT_LIMIT)
    return `Text files over ${formatSize(TEXT_LIMIT)} are not previewed; this one is ${formatSize(size)}.`;
  return null;
}

function kindOf(item: Item): Kind {
  const f = familyOf(item);
  if (f === 'image') return 'image';
  if (f === 'video') return 'video';
  if (f === 'audio') return 'audio';
  if (f === 'pdf') return (item.size ?? 0) <= PDF_LIMIT ? 'pdf' : 'none';
  if (textLike(item) && (item.size ?? 0) <= TEXT_LIMIT) return 'text';
  return 'none';
}

/** Zoom (wheel, buttons, pinch, double-click) and pan (drag) of one image, by CSS transform. */
function ZoomImage({ item, onSwipe }: { item: Item; onSwipe: (dir: 1 | -1) => void }) {
  const img = useRef<HTMLImageElement>(null);
  const view = useRef({ scale: 1, x: 0, y: 0 });
  const pointers = useRef(new Map<number, { x: number; y: number }>());
  const gesture = useRef<{ dist: number; scale: number; startX: number; moved: boolean } | null>(null);
  const [failed, setFailed] = useState(false);
  // The fitted large thumbnail first (a fraction of the bytes; HEIC, which browsers cannot show, too); the original once zoomed in.
  const original = `${api.files.downloadUrl(item)}?inline=1`;
  const fitted = item.hasThumbnail ? api.files.thumbnailUrl(item, 'large') : null;
  const showsOriginal = BROWSER_IMAGES.has(item.mimeType ?? '');
  const [src, setSrc] = useState(fitted ?? original);
  const apply = () => {
    const v = view.current;
    if (img.current) img.current.style.transform = `translate(${v.x}px, ${v.y}px) scale(${v.scale})`;
    if (v.scale > 1 && showsOriginal) setSrc(original);
  };
  const zoom = (factor: number) => {
    const v = view.current;
    v.scale = Math.min(8, Math.max(1, v.scale * factor));
    if (v.scale === 1) v.x = v.y = 0;
    apply();
  };
  useEffect(() => {
    view.current = { scale: 1, x: 0, y: 0 };
    apply();
    const keys = (e: KeyboardEvent) => {
      if (e.key === '+' || e.key === '=') zoom(1.25);
      else if (e.key === '-') zoom(0.8);
      else if (e.key === '0') zoom(0);
    };
    addEventListener('keydown', keys);
    return () => removeEventListener('keydown', keys);
  }, [item.id]);
  if (failed) return <NoPreview item={item} reason="This image could not be shown by the browser." />;
  return (
    <div class="preview-stage">
      <div
        class="zoom-area"
        onWheel={(e) => {
          e.preventDefault();
          zoom(e.deltaY < 0 ? 1.15 : 1 / 1.15);
        }}
        onDblClick={() => zoom(view.current.scale > 1 ? 0 : 2.5)}
        onPointerDown={(e) => {
          (e.currentTarget as HTMLElement).setPointerCapture(e.pointerId);
          pointers.current.set(e.pointerId, { x: e.clientX, y: e.clientY });
          const ps = [...pointers.current.values()];
          gesture.current = {
            dist: ps.length === 2 ? Math.hypot(ps[0]!.x - ps[1]!.x, ps[0]!.y - ps[1]!.y) : 0,
            scale: view.current.scale,
            startX: e.clientX,
            moved: false,
          };
        }}
        onPointerMove={(e) => {
          const prev = pointers.current.get(e.pointerId);
          if (!prev || !gesture.current) return;
          pointers.current.set(e.pointerId, { x: e.clientX, y: e.clientY });
          const ps = [...pointers.current.values()];
          const v = view.current;
          if (ps.length === 2 && gesture.current.dist) {
            v.scale = Math.min(
              8,
              Math.max(1, (gesture.current.scale * Math.hypot(ps[0]!.x - ps[1]!.x, ps[0]!.y - ps[1]!.y)) / gesture.current.dist),
            );
          } else if (v.scale > 1) {
            v.x += e.clientX - prev.x;
            v.y += e.clientY - prev.y;
          }
          gesture.current.moved = true;
          apply();
        }}
        onPointerUp={(e) => {
          const g = gesture.current;
          pointers.current.delete(e.pointerId);
          if (g && pointers.current.size === 0) {
            // A horizontal swipe at normal size goes to the next or previous image.
            const dx = e.clientX - g.startX;
            if (view.current.scale === 1 && Math.abs(dx) > 60) onSwipe(dx < 0 ? 1 : -1);
            gesture.current = null;
          }
        }}
      >
        <img
          ref={img}
          src={src}
          alt={item.name}
          draggable={false}
          onError={() => (src !== original && showsOriginal ? setSrc(original) : setFailed(true))}
        />
      </div>
      <div class="zoom-buttons">
        <button type="button" class="icon-button" aria-label="Zoom out" onClick={() => zoom(0.8)}>
          <Icon name="zoomOut" />
        </button>
        <button type="button" class="icon-button" aria-label="Zoom in" onClick={() => zoom(1.25)}>
          <Icon name="zoomIn" />
        </button>
      </div>
    </div>
  );
}

function NoPreview({ item, reason }: { item: Item; reason: string }) {
  return (
    <div class="preview-none">
      <FileIcon family={familyOf(item)} size={72} />
      <p>{reason}</p>
      {can('files.download') && opensInEditor(item) && (
        <button type="button" class="button primary" onClick={() => openInEditor(item)}>
          <Icon name="editDocument" size={18} /> Open in editor
        </button>
      )}
      {can('files.download') && (
        <a class={`button ${opensInEditor(item) ? '' : 'primary'}`} href={api.files.downloadUrl(item)} download>
          <Icon name="download" size={18} /> Download ({formatSize(item.size ?? 0)})
        </a>
      )}
    </div>
  );
}

/** Where `find` first occurs in `text`, ignoring case, or -1. */
const matchAt = (text: string, find: string | undefined) => (find ? text.toLocaleLowerCase().indexOf(find.toLocaleLowerCase()) : -1);

function TextPreview({ item, find }: { item: Item; find?: string }) {
  const [text, setText] = useState<string | null>(null);
  const mark = useRef<HTMLElement>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const ctl = new AbortController();
    setText(null);
    request(api.files.downloadUrl(item), { signal: ctl.signal, headers: { Range: `bytes=0-${TEXT_LIMIT - 1}` } })
      .then((r) => r.text())
      .then(setText, (err: Error) => err.name !== 'AbortError' && setError(err.message));
    return () => ctl.abort();
  }, [item.id]);
  useEffect(() => mark.current?.scrollIntoView({ block: 'center' }), [text]);
  if (error) return <NoPreview item={item} reason={error} />;
  if (text === null) return <p class="preview-loading">Loading…</p>;
  const at = matchAt(text, find);
  return (
    <pre class="preview-text" tabIndex={0} aria-label={`Contents of ${item.name}`}>
      {at < 0 ? (
        text
      ) : (
        <>
          {text.slice(0, at)}
          <mark ref={mark}>{text.slice(at, at + find!.length)}</mark>
          {text.slice(at + find!.length)}
        </>
      )}
    </pre>
  );
}

function PdfPreview({ item, find }: { item: Item; find?: string }) {
  const [url, setUrl] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const ctl = new AbortController();
    let made: string | null = null;
    // The download answers as an attachment; a blob URL lets the browser's own PDF viewer show it.
    request(api.files.downloadUrl(item), { signal: ctl.signal })
      .then((r) => r.blob())
      .then(
        (b) => setUrl((made = URL.createObjectURL(new Blob([b], { type: 'application/pdf' })))),
        (err: Error) => err.name !== 'AbortError' && setError(err.message),
      );
    return () => {
      ctl.abort();
      if (made) URL.revokeObjectURL(made);
    };
  }, [item.id]);
  if (error) return <NoPreview item={item} reason={error} />;
  if (!url) return <p class="preview-loading">Loading…</p>;
  // Viewers that take a search in the fragment (pdf.js) open at the match; others open at the first page.
  return <iframe class="preview-pdf" src={find ? `${url}#search=${encodeURIComponent(find)}` : url} title={item.name} />;
}

/** Video and audio stream from the download URL: the browser asks for byte ranges as it plays and seeks. */
function MediaPreview({ item, video }: { item: Item; video: boolean }) {
  const [failed, setFailed] = useState(false);
  useEffect(() => setFailed(false), [item.id]);
  if (failed)
    return (
      <NoPreview
        item={item}
        reason={`This browser cannot play this ${video ? 'video' : 'audio file'}. Download it to play it in another app.`}
      />
    );
  const media = {
    key: item.id,
    src: api.files.downloadUrl(item),
    controls: true,
    autoplay: true,
    preload: 'metadata' as const,
    'aria-label': item.name,
    onError: () => setFailed(true),
  };
  // User files come without caption tracks.
  // The first frame (made with ffmpeg on the server) shows until the video plays.
  if (video)
    return <video class="preview-media" poster={item.hasThumbnail ? api.files.thumbnailUrl(item, 'large') : undefined} {...media} />;
  return (
    <div class="preview-none">
      <FileIcon family="audio" size={72} />
      <audio {...media} />
    </div>
  );
}

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

function Viewer(props: { files: Item[]; start: number; find?: string; tools?: ViewerTools; close: () => void }) {
  const { start, find, close } = props;
  const [files, setFiles] = useState(props.files);
  const [at, setAt] = useState(start);
  const [info, setInfo] = useState(false);
  const item = files[at]!;
  const go = (d: 1 | -1) => setAt((i) => Math.min(files.length - 1, Math.max(0, i + d)));
  const tools = props.tools?.(item, () => setInfo((o) => !o)) ?? [];
  const use = (tool: ViewerTool) => {
    void tool.run();
    if (!tool.removes) return;
    if (files.length === 1) return close();
    setFiles(files.filter((f) => f.id !== item.id));
    setAt(Math.min(at, files.length - 2));
  };
  useEffect(() => {
    const keys = (e: KeyboardEvent) => {
      if ((e.target as HTMLElement).closest('video, audio, pre')) return;
      // A dialog opened from here (Share) has the keys while it is on top.
      if (![...document.querySelectorAll('dialog[open]')].at(-1)?.classList.contains('preview')) return;
      if (e.key === 'ArrowRight') go(1);
      else if (e.key === 'ArrowLeft') go(-1);
      else return;
      e.preventDefault();
    };
    addEventListener('keydown', keys);
    return () => removeEventListener('keydown', keys);
  }, [files.length]);
  return (
    <Dialog title={displayName(item.name, item.type, hideExtensions.value)} onClose={close} class="preview">
      <div class="preview-bar">
        <span class="muted">
          {formatSize(item.size ?? 0)} · {at + 1} of {files.length}
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
    </Dialog>
  );
}

/**
 * Opens the preview on one file, with next/previous through the other files around it; `find` opens text
 * and PDF at those words; `tools` adds the file manager's actions beside Download.
 */
export function openPreview(files: Item[], item: Item, find?: string, tools?: ViewerTools): void {
  const start = Math.max(
    0,
    files.findIndex((f) => f.id === item.id),
  );
  const list = files.length ? files : [item];
  void openDialog<void>((close) => <Viewer files={list} start={start} find={find} tools={tools} close={() => close()} />);
}
