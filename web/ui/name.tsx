import { extensionOf } from '../app/format.ts';

/**
 * A name on one line that, when it does not fit, loses its middle (`holiday-2024-li…edited.jpg`) rather
 * than its end: the start shrinks with an ellipsis, the last characters and the extension always show.
 * The text itself stays whole (screen readers, copying) and the full name is on hover.
 */
export function Name({ text, class: cls = '' }: { text: string; class?: string }) {
  const keep = Math.min(extensionOf(text).length + 6, Math.floor(text.length / 2));
  const head = text.slice(0, text.length - keep);
  return (
    // A right-to-left name lays its two parts out right to left, or a word split between them reads in pieces.
    <span class={`tname ${cls}`} title={text} dir="auto">
      <span class="tname-head">{head}</span>
      {keep > 0 && <span class="tname-tail">{text.slice(head.length)}</span>}
    </span>
  );
}
