import { type ComponentChildren, cloneElement, type VNode } from 'preact';
import { useId } from 'preact/hooks';

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
  if (!message) return null;
  return (
    <p class="field-error" role="alert">
      {message}
    </p>
  );
}
