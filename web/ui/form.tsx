import { type ComponentChildren, cloneElement, type VNode } from 'preact';
import { useId, useLayoutEffect, useRef } from 'preact/hooks';

/** A labelled control; its hint is tied to it (aria-describedby) and kept out of its name. */
export function Field({ label, hint, children }: { label: string; hint?: ComponentChildren; children: VNode }) {
  const id = useId();
  const hintId = `${id}-hint`;
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {cloneElement(children, { id, 'aria-describedby': hint ? hintId : undefined })}
      {hint && (
        <small id={hintId} class="muted">
          {hint}
        </small>
      )}
    </div>
  );
}

/** A refusal next to the form that caused it (the server's message, or the same rule checked first). */
export function FormError({ message }: { message: string | null }) {
  const ref = useRef<HTMLParagraphElement>(null);
  // In a long dialog or page the refusal may be below the fold: bring it into view.
  useLayoutEffect(() => ref.current?.scrollIntoView({ block: 'nearest' }), [message]);
  if (!message) return null;
  return (
    <p class="field-error" role="alert" ref={ref}>
      {message}
    </p>
  );
}
