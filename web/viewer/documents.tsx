import { useEffect, useRef, useState } from 'preact/hooks';
import type { Item } from '../../src/contract/files.ts';
import { api } from '../api/index.ts';
import { request } from '../app/api.ts';
import { openInEditor, opensInEditor } from '../app/editor.ts';
import { familyOf, formatSize } from '../app/format.ts';
import { can } from '../app/session.ts';
import { FileIcon, Icon } from '../ui/icons.tsx';
import { TEXT_LIMIT } from './kinds.ts';

/** A file the viewer cannot show: why, and what can be done with it instead. */
export function NoPreview({ item, reason }: { item: Item; reason: string }) {
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

export function TextPreview({ item, find }: { item: Item; find?: string }) {
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

export function PdfPreview({ item, find }: { item: Item; find?: string }) {
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
