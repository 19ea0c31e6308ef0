import { useState } from 'preact/hooks';
import { api } from '../api/index.ts';
import { useLoad } from '../app/load.ts';
import { isSubUser } from '../app/session.ts';
import { FormError } from '../ui/form.tsx';
import { Section } from '../ui/page.tsx';

/** The account's opt-out from content search: shown only where the admin turned it on; the owner decides for the account. */
export function ContentSearchPreference() {
  const current = useLoad(api.accounts.contentSearchPreference);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const p = current.data;
  if (!p?.available) return null;
  return (
    <Section
      title="Search inside documents"
      intro="This Coffer can find files by the words inside them. Those words are kept in its database without encryption; the files stay encrypted."
    >
      <div class="setting">
        <label class="switch">
          <input
            type="checkbox"
            role="switch"
            checked={!p.optOut}
            disabled={isSubUser.value}
            // Not disabled while saving, which would drop the focus of the keyboard that switched it; a switch meanwhile is undone.
            aria-disabled={busy || undefined}
            aria-describedby="content-search-about"
            onChange={async (e) => {
              if (busy) {
                e.currentTarget.checked = !p.optOut;
                return;
              }
              const include = e.currentTarget.checked;
              // Shown switched at once (a re-render while saving must not flip it back), reverted if refused.
              current.set({ ...p, optOut: !include });
              setBusy(true);
              setError(null);
              try {
                current.set(await api.accounts.setContentSearchOptOut(!include));
              } catch (err) {
                current.set(p);
                setError((err as Error).message);
              } finally {
                setBusy(false);
              }
            }}
          />
          <span>Include my documents in content search</span>
        </label>
        <p id="content-search-about" class="muted small setting-about">
          {isSubUser.value
            ? 'The account owner decides this for the whole account.'
            : p.optOut
              ? 'Off: search finds this account’s files by name only, and no words of its documents are stored.'
              : 'Off deletes the stored words of this account’s documents at once; search then finds files by name only.'}
        </p>
        {error && <FormError message={error} />}
      </div>
    </Section>
  );
}
