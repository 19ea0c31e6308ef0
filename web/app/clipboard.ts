import { signal } from '@preact/signals';
import type { Item } from './api-types.ts';

/** Cut items waiting for Paste, which moves them (Finder's Cut/Paste as a move). */
export const cutItems = signal<Item[] | null>(null);
