import { photosWhose } from '../app/prefs.ts';

const CHOICES = [
  { value: 'mine', label: 'Mine' },
  { value: 'shared', label: 'Shared with me' },
  { value: 'all', label: 'All' },
] as const;

/** Photos' filter: the account's own photos, those in folders and albums others share with it, or both. */
export function PhotosWhose() {
  return (
    <fieldset class="photos-whose segmented">
      <legend class="sr-only">Show photos</legend>
      {CHOICES.map((c) => (
        <label key={c.value} class={photosWhose.value === c.value ? 'on' : ''}>
          <input
            type="radio"
            name="photos-whose"
            value={c.value}
            checked={photosWhose.value === c.value}
            onChange={() => (photosWhose.value = c.value)}
          />
          <span>{c.label}</span>
        </label>
      ))}
    </fieldset>
  );
}
