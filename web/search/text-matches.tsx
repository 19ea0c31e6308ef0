import type { SearchHit } from '../../src/contract/files.ts';
import { displayName, familyOf } from '../app/format.ts';
import { hideExtensions } from '../app/session.ts';
import { searchSource, textMatches } from '../app/listings.ts';
import { viewFileFrom } from '../files/actions.tsx';
import { FolderName } from '../files/item-cells.tsx';
import { FileIcon } from '../ui/icons.tsx';

/** Text of escaped HTML (`&amp;` → `&`), without running or inserting any markup. */
function textOf(html: string): string {
  const box = document.createElement('textarea');
  box.innerHTML = html;
  return box.value;
}

/**
 * A snippet's pieces: the server escapes the document's text and wraps matches in <mark>; the app
 * splits on those two tags and shows everything else as text, so no markup from a document can run.
 */
function pieces(snippet: string): Array<{ text: string; marked: boolean }> {
  return snippet.split(/(<mark>.*?<\/mark>)/).map((part) => {
    const m = /^<mark>(.*)<\/mark>$/.exec(part);
    return { text: textOf(m ? m[1]! : part), marked: m !== null };
  });
}

/** The first highlighted words of a snippet: what the preview looks for to open at the match. */
const firstMatch = (snippet: string | null | undefined) => (snippet ? pieces(snippet).find((p) => p.marked)?.text : undefined);

/**
 * Files whose text matches the search, under their names, each with the words around the match
 * highlighted. Enter or a click opens the preview at the match; ↑/↓ move between results.
 */
export function TextMatches({ hits }: { hits: SearchHit[] }) {
  const open = (hit: SearchHit) => viewFileFrom('search', searchSource(textMatches.value.q), hits, hit, firstMatch(hit.snippet));
  return (
    <section class="text-matches" aria-labelledby="text-matches-title">
      <h2 id="text-matches-title">In the text</h2>
      <ul>
        {hits.map((hit) => (
          <li key={hit.id}>
            <button
              type="button"
              class="text-match"
              onClick={() => open(hit)}
              onKeyDown={(e) => {
                if (e.key !== 'ArrowDown' && e.key !== 'ArrowUp') return;
                e.preventDefault();
                const li = e.currentTarget.parentElement;
                const next = e.key === 'ArrowDown' ? li?.nextElementSibling : li?.previousElementSibling;
                next?.querySelector('button')?.focus();
              }}
            >
              <span class="text-match-head">
                <FileIcon family={familyOf(hit)} size={20} />
                <span class="text-match-name">{displayName(hit.name, hit.type, hideExtensions.value)}</span>
                <span class="muted small text-match-folder">
                  in <FolderName id={hit.parentId} />
                </span>
              </span>
              {hit.snippet ? (
                <span class="text-match-snippet">
                  {pieces(hit.snippet).map((p, n) => (p.marked ? <mark key={n}>{p.text}</mark> : p.text))}
                </span>
              ) : (
                <span class="text-match-snippet muted">The words match; showing them needs the Download permission.</span>
              )}
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}
