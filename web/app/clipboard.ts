import { signal } from '@preact/signals';
import type { Item } from '../../src/contract/files.ts';

/** Cut items waiting for Paste, which moves them (Finder's Cut/Paste as a move). */
export const cutItems = signal<Item[] | null>(null);
