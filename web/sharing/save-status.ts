/** What a share dialog's save line says about the last change: every part of the dialog reports through it. */
export type SaveStatus = { kind: 'saving' | 'saved' | 'error'; text: string };
