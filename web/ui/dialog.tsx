import { signal } from '@preact/signals';
import type { ComponentChildren, VNode } from 'preact';
import { useId, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { SubmitButton } from './form.tsx';
import { placeToasts } from './toasts.tsx';

interface Open {
  id: number;
  node: VNode;
}

const open = signal<Open[]>([]);
let nextId = 1;
/** The modal dialogs open now, the topmost last: the toasts show inside it. */
const modals: HTMLDialogElement[] = [];

/** Shows a dialog; resolves with what it was closed with (undefined when dismissed). */
export function openDialog<T>(render: (close: (value?: T) => void) => VNode): Promise<T | undefined> {
  return new Promise((resolve) => {
    const id = nextId++;
    const close = (value?: T) => {
      open.value = open.value.filter((d) => d.id !== id);
      resolve(value);
    };
    open.value = [...open.value, { id, node: render(close) }];
  });
}

export function DialogHost() {
  return (
    <>
      {open.value.map((d) => (
        <div key={d.id}>{d.node}</div>
      ))}
    </>
  );
}

/** A modal on the browser's own <dialog>: focus stays inside, Esc and a click outside close it. */
export function Dialog(props: {
  title: string;
  onClose: () => void;
  children: ComponentChildren;
  wide?: boolean;
  class?: string;
  describedBy?: string;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useLayoutEffect(() => {
    const d = ref.current!;
    const previous = document.activeElement as HTMLElement | null;
    // The list item it was opened from may leave meanwhile (trashed in the viewer or on another device): then the list's current item.
    const list = previous?.closest<HTMLElement>('[role="grid"], [role="listbox"]');
    d.showModal();
    modals.push(d);
    placeToasts(d);
    return () => {
      // While the modal is open the page behind it is inert and cannot take focus: close it first. Focus
      // goes back without scrolling, so a list is where it was when the dialog opened.
      d.close();
      modals.splice(modals.indexOf(d), 1);
      placeToasts(modals.at(-1) ?? null);
      if (previous?.isConnected || !list?.isConnected) previous?.focus?.({ preventScroll: true });
      else list.querySelector<HTMLElement>('[tabindex="0"]')?.focus({ preventScroll: true });
    };
  }, []);
  return (
    <dialog
      ref={ref}
      class={`dialog ${props.wide ? 'wide' : ''} ${props.class ?? ''}`}
      aria-labelledby={titleId}
      aria-describedby={props.describedBy}
      onCancel={(e) => {
        e.preventDefault();
        props.onClose();
      }}
      onMouseDown={(e) => {
        if (e.target === ref.current) props.onClose();
      }}
    >
      <div class="dialog-head">
        <h2 id={titleId}>{props.title}</h2>
        <button type="button" class="icon-button" aria-label="Close" onClick={props.onClose}>
          <svg
            width="20"
            height="20"
            viewBox="0 0 24 24"
            fill="none"
            stroke="currentColor"
            stroke-width="1.8"
            stroke-linecap="round"
            aria-hidden="true"
          >
            <path d="M6 6l12 12M18 6 6 18" />
          </svg>
        </button>
      </div>
      {props.children}
    </dialog>
  );
}

/** Asks before something that cannot be undone; says what and how much. */
export function confirmDialog(opts: { title: string; message: ComponentChildren; confirm: string; danger?: boolean }): Promise<boolean> {
  return openDialog<boolean>((close) => (
    <Dialog title={opts.title} onClose={() => close(false)}>
      <div class="dialog-body">{typeof opts.message === 'string' ? <p>{opts.message}</p> : opts.message}</div>
      <div class="dialog-actions">
        <button type="button" class="button" onClick={() => close(false)}>
          Cancel
        </button>
        <button type="button" class={`button ${opts.danger ? 'danger' : 'primary'}`} onClick={() => close(true)} autofocus>
          {opts.confirm}
        </button>
      </div>
    </Dialog>
  )).then((v) => v === true);
}

/** A form dialog's buttons: anything extra on the left, then Cancel and the submit button. */
export function FormButtons({
  submit,
  busy,
  cancel,
  children,
}: {
  submit: string;
  busy: boolean;
  cancel: () => void;
  children?: ComponentChildren;
}) {
  return (
    <div class="dialog-actions">
      {children}
      <button type="button" class="button" onClick={cancel}>
        Cancel
      </button>
      <SubmitButton busy={busy}>{submit}</SubmitButton>
    </div>
  );
}

function PromptForm(props: {
  label: string;
  value: string;
  confirm: string;
  selectEnd?: number;
  maxLength?: number;
  close: (v?: string) => void;
  validate?: (v: string) => string | null;
  submit?: (v: string) => Promise<string | null>;
}) {
  const [value, setValue] = useState(props.value);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const inputRef = useRef<HTMLInputElement>(null);
  const errId = useId();
  // The dialog is not open yet (its own effect runs after this one): select here, and let showModal focus
  // the field through autofocus, or it focuses the first button (Close) instead.
  useLayoutEffect(() => inputRef.current!.setSelectionRange(0, props.selectEnd ?? props.value.length), []);
  return (
    <form
      onSubmit={async (e) => {
        e.preventDefault();
        const problem = props.validate?.(value) ?? null;
        if (problem) return setError(problem);
        if (props.submit) {
          setBusy(true);
          const failed = await props.submit(value);
          setBusy(false);
          if (failed) return setError(failed);
        }
        props.close(value);
      }}
    >
      <div class="dialog-body">
        <label class="field">
          <span>{props.label}</span>
          <input
            ref={inputRef}
            autofocus
            value={value}
            onInput={(e) => setValue(e.currentTarget.value)}
            aria-invalid={error ? 'true' : undefined}
            aria-describedby={error ? errId : undefined}
            maxLength={props.maxLength ?? 100}
            required
          />
        </label>
        {error && (
          <p id={errId} class="field-error" role="alert">
            {error}
          </p>
        )}
      </div>
      <FormButtons submit={props.confirm} busy={busy} cancel={() => props.close()} />
    </form>
  );
}

/** Asks for one line of text (a name); `submit` may refuse it with the server's message, shown inline. */
export function promptDialog(opts: {
  title: string;
  label: string;
  value?: string;
  confirm: string;
  selectEnd?: number;
  maxLength?: number;
  validate?: (v: string) => string | null;
  submit?: (v: string) => Promise<string | null>;
}): Promise<string | undefined> {
  return openDialog<string>((close) => (
    <Dialog title={opts.title} onClose={() => close()}>
      <PromptForm
        label={opts.label}
        value={opts.value ?? ''}
        confirm={opts.confirm}
        selectEnd={opts.selectEnd}
        maxLength={opts.maxLength}
        close={close}
        validate={opts.validate}
        submit={opts.submit}
      />
    </Dialog>
  ));
}
