import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { refreshSession } from '../app/session.ts';
import { FormError, SubmitButton } from '../ui/form.tsx';
import { Section } from '../ui/page.tsx';

/** What a save said: the server's refusal, or that it was saved. */
export function Outcome({ error, saved }: { error: string | null; saved: ComponentChildren | null }) {
  if (error) return <FormError message={error} />;
  return (
    <p class="saved" role="status">
      {saved}
    </p>
  );
}

export function useSave() {
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState<ComponentChildren | null>(null);
  const [busy, setBusy] = useState(false);
  const save = async (work: () => Promise<ComponentChildren>) => {
    setBusy(true);
    setError(null);
    setSaved(null);
    try {
      setSaved(await work());
      // This page's own view of the instance (hidden extensions, upload limit...) follows at once.
      void refreshSession();
      return true;
    } catch (err) {
      setError((err as Error).message);
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { error, saved, busy, save };
}

/** A settings section whose form saves with Save: the form, its buttons and what the save said. */
export function SettingForm(props: {
  title: string;
  intro: ComponentChildren;
  save: ReturnType<typeof useSave>;
  /** Save is offered once the current value has loaded. */
  ready: boolean;
  loadError?: string | null;
  onSubmit: () => void;
  inline?: boolean;
  /** Shown above the form (a switch the fields belong to). */
  before?: ComponentChildren;
  /** More buttons beside Save. */
  actions?: ComponentChildren;
  children: ComponentChildren;
}) {
  const buttons = (
    <>
      <SubmitButton busy={props.save.busy} disabled={!props.ready}>
        Save
      </SubmitButton>
      {props.actions}
    </>
  );
  return (
    <Section title={props.title} intro={props.intro}>
      {props.before}
      <form
        noValidate
        class={props.inline ? 'form inline-form' : 'form'}
        onSubmit={(e) => {
          e.preventDefault();
          if (!props.save.busy) props.onSubmit();
        }}
      >
        {props.children}
        {props.inline ? buttons : <div class="form-actions">{buttons}</div>}
      </form>
      <Outcome error={props.save.error ?? props.loadError ?? null} saved={props.save.saved} />
    </Section>
  );
}

/** An on/off setting that saves as it is switched; `confirm` may ask first. */
export function Toggle(props: {
  label: string;
  value: boolean;
  description: ComponentChildren;
  put: (on: boolean) => Promise<boolean>;
  confirm?: (on: boolean) => Promise<boolean>;
}) {
  const [on, setOn] = useState(props.value);
  const s = useSave();
  useEffect(() => setOn(props.value), [props.value]);
  const id = props.label.toLowerCase().replace(/[^a-z]+/g, '-');
  return (
    <div class="setting">
      <label class="switch">
        <input
          type="checkbox"
          role="switch"
          checked={on}
          // Not disabled while saving, which would drop the focus of the keyboard that switched it; a switch meanwhile is undone.
          aria-disabled={s.busy || undefined}
          aria-describedby={`${id}-about`}
          onChange={async (e) => {
            const box = e.currentTarget;
            const want = box.checked;
            if (s.busy) {
              box.checked = on;
              return;
            }
            if (props.confirm && !(await props.confirm(want))) {
              box.checked = on;
              return;
            }
            setOn(want);
            const ok = await s.save(async () => {
              const now = await props.put(want);
              setOn(now);
              return `Saved: ${now ? 'on' : 'off'}.`;
            });
            if (!ok) setOn(!want);
          }}
        />
        <span>{props.label}</span>
      </label>
      <div id={`${id}-about`} class="muted small setting-about">
        {props.description}
      </div>
      <Outcome error={s.error} saved={s.saved} />
    </div>
  );
}
