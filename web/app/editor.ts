import type { Item } from '../../src/contract/files.ts';
import { extensionOf } from './format.ts';
import { editorExtensions } from './session.ts';
import { api } from '../api/index.ts';

/** Whether the document server opens this file (an office document, when one is connected). */
export const opensInEditor = (item: Item) =>
  item.type === 'file' && editorExtensions.value.has(extensionOf(item.name).slice(1).toLowerCase());

/** The editor is the server's viewer page, in a tab of its own: the file manager stays where it was. */
export function openInEditor(item: Item): void {
  window.open(api.files.editorUrl(item), '_blank', 'noopener');
}
