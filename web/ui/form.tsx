import { type ComponentChildren, cloneElement, type VNode } from 'preact';
import { useId, useLayoutEffect, useRef } from 'preact/hooks';
import { EMAIL_MAX, PASSWORD } from '../../src/contract/limits.ts';

// id and aria-describedby come from the Field around it.
type TextInput = {
  value: string;
  onValue: (value: string) => void;
  name?: string;
  autoComplete?: string;
  autofocus?: boolean;
  id?: string;
  'aria-describedby'?: string;
};

/** An email address field, held to the server's length limit. */
export function EmailInput({ value, onValue, ...rest }: TextInput) {
  return <input type="email" required maxLength={EMAIL_MAX} {...rest} value={value} onInput={(e) => onValue(e.currentTarget.value)} />;
}

/**
 * A password field held to the server's limits: a new one at least `min` characters (the sign-up and
 * change rule unless given), and the browser's password manager told which of the two it is.
 */
export function PasswordInput({
  purpose,
  min = PASSWORD.min,
  value,
  onValue,
  ...rest
}: TextInput & { purpose: 'current' | 'new'; min?: number }) {
  return (
    <input
      type="password"
      required
      autoComplete={purpose === 'current' ? 'current-password' : 'new-password'}
      minLength={purpose === 'new' ? min : undefined}
      maxLength={PASSWORD.max}
      {...rest}
      value={value}
      onInput={(e) => onValue(e.currentTarget.value)}
    />
  );
}

/**
 * A labelled control: its name is exactly the label; its hint is tied to it (aria-describedby) and kept
 * out of its name, beside any description the control already names (text elsewhere on the page). `beside`
 * puts buttons that act on the control in one row with it; `after` follows the hint (a choice that changes
 * what the field means). The control keeps an id it was given, for code that finds it.
 */
export function Field({
  label,
  hint,
  class: cls,
  beside,
  after,
  children,
}: {
  label: string;
  hint?: ComponentChildren;
  /** A class beside `field`, for the place the field takes in its row. */
  class?: string;
  beside?: ComponentChildren;
  after?: ComponentChildren;
  children: VNode<{ id?: string; 'aria-describedby'?: string }>;
}) {
  const generated = useId();
  const id = children.props.id ?? generated;
  const hintId = `${id}-hint`;
  const describedBy = [children.props['aria-describedby'], hint ? hintId : null].filter(Boolean).join(' ') || undefined;
  const control = cloneElement(children, { id, 'aria-describedby': describedBy });
  return (
    <div class={cls ? `field ${cls}` : 'field'}>
      <label for={id}>{label}</label>
      {beside ? (
        <div class="field-row">
          {control}
          {beside}
        </div>
      ) : (
        control
      )}
      {hint && (
        <small id={hintId} class="muted">
          {hint}
        </small>
      )}
      {after}
    </div>
  );
}

type BusyProps = {
  busy: boolean;
  class?: string;
  /** Not available for a reason other than the server answering (nothing chosen yet): truly disabled. */
  disabled?: boolean;
  'aria-label'?: string;
  children: ComponentChildren;
};

/**
 * A form's submit button, only aria-disabled while the server answers: a disabled button drops the focus of the
 * keyboard that pressed it. A press meanwhile, or Enter in a field (which clicks it), is stopped here, so nothing is sent twice.
 */
export function SubmitButton({ class: className = 'button primary', ...rest }: BusyProps) {
  return <BusyButton type="submit" class={className} {...rest} />;
}

/** A button that acts at once (not a form's submit), held the same way as SubmitButton while the server answers. */
export function ActionButton({ class: className = 'button', ...rest }: BusyProps & { onClick: () => unknown }) {
  return <BusyButton type="button" class={className} {...rest} />;
}

function BusyButton({
  type,
  busy,
  disabled,
  onClick,
  children,
  ...rest
}: BusyProps & { type: 'submit' | 'button'; class: string; onClick?: () => unknown }) {
  return (
    <button
      type={type}
      {...rest}
      disabled={disabled || undefined}
      aria-disabled={busy || undefined}
      onClick={(e) => {
        if (busy) e.preventDefault();
        else onClick?.();
      }}
    >
      {children}
    </button>
  );
}

/** A select's options from `[value, label]` pairs. */
export function Options({ choices }: { choices: ReadonlyArray<readonly [string | number, string]> }) {
  return (
    <>
      {choices.map(([value, label]) => (
        <option key={value} value={value}>
          {label}
        </option>
      ))}
    </>
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
      {withCode(message)}
    </p>
  );
}

/** A server message quotes a command between back-ticks (`coffer setup-code`): shown as code, without them. */
function withCode(message: string): ComponentChildren {
  const parts = message.split('`');
  if (parts.length % 2 === 0) return message;
  return parts.map((part, n) => (n % 2 ? <code key={n}>{part}</code> : part));
}
