import { signal } from '@preact/signals';

export interface Command {
  label: string;
  keys?: string;
  run: () => void;
}

/** The actions of the screen on view (its selection included), offered by the command palette. */
export const screenCommands = signal<Command[]>([]);
