import { useState } from 'preact/hooks';
import type { Expiry } from '../../src/contract/sharing.ts';

/** A preset, or the last moment of a day the owner picked (ISO). */
export type ExpiryChoice = Expiry | { at: string };

/** When a link saved now with this choice ends (ISO), null for never. */
export const expiresAtOf = (choice: ExpiryChoice) =>
  typeof choice !== 'string'
    ? choice.at
    : choice === 'never'
      ? null
      : new Date(Date.now() + (choice === '7d' ? 7 : 30) * 86_400_000).toISOString();

const PRESETS: { value: Expiry; label: string }[] = [
  { value: '7d', label: '7 days' },
  { value: '30d', label: '30 days' },
  { value: 'never', label: 'Never' },
];

const DAY = 86_400_000;
/** A date input's value (local day) for a moment. */
const dayOf = (ms: number) => {
  const d = new Date(ms);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
};
/** The end of a picked local day, so a link "until 12 December" works all of that day. */
const endOfDay = (day: string) => new Date(`${day}T23:59:59`).toISOString();

/** What the radios show for a link that ends at `expiresAt` (null: never; undefined: no link yet). */
function choiceOf(expiresAt: string | null | undefined): { preset: Expiry | 'date'; day: string } {
  const week = dayOf(Date.now() + 7 * DAY);
  if (expiresAt === undefined) return { preset: '7d', day: week };
  if (expiresAt === null) return { preset: 'never', day: week };
  const left = Date.parse(expiresAt) - Date.now();
  // A preset set moments ago reads as that preset; anything else as its date.
  if (Math.abs(left - 7 * DAY) < 3_600_000) return { preset: '7d', day: week };
  if (Math.abs(left - 30 * DAY) < 3_600_000) return { preset: '30d', day: week };
  return { preset: 'date', day: dayOf(Date.parse(expiresAt)) };
}

/** The link's expiry: three presets and a date picker; `onChange` gets each choice as it is made. */
export function ExpiryField(props: { legend: string; expiresAt: string | null | undefined; onChange: (choice: ExpiryChoice) => void }) {
  const [state, setState] = useState(() => choiceOf(props.expiresAt));
  const tomorrow = dayOf(Date.now() + DAY);
  const last = dayOf(Date.now() + 3650 * DAY);
  const pickDay = (day: string) => {
    setState({ preset: 'date', day });
    if (day >= tomorrow && day <= last) props.onChange({ at: endOfDay(day) });
  };
  return (
    <fieldset class="radio-row expiry-field">
      <legend>{props.legend}</legend>
      {PRESETS.map((p) => (
        <label key={p.value} class="radio">
          <input
            type="radio"
            name="expiry"
            value={p.value}
            checked={state.preset === p.value}
            onChange={() => {
              setState({ ...state, preset: p.value });
              props.onChange(p.value);
            }}
          />
          <span>{p.label}</span>
        </label>
      ))}
      <label class="radio">
        <input type="radio" name="expiry" value="date" checked={state.preset === 'date'} onChange={() => pickDay(state.day)} />
        <span>On a date</span>
      </label>
      {state.preset === 'date' && (
        <>
          <label class="field expiry-date">
            <span class="sr-only">Expiry date</span>
            <input
              type="date"
              min={tomorrow}
              max={last}
              value={state.day}
              aria-describedby="expiry-date-hint"
              onChange={(e) => pickDay(e.currentTarget.value)}
            />
          </label>
          <small id="expiry-date-hint" class="muted">
            {state.day < tomorrow || state.day > last
              ? 'Pick a day from tomorrow to ten years ahead.'
              : 'The link works until the end of that day.'}
          </small>
        </>
      )}
    </fieldset>
  );
}
