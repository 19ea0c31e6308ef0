import type { ComponentChildren } from 'preact';
import { copyText } from '../ui/copy.ts';
import { Icon } from '../ui/icons.tsx';
import { type ExpiryChoice, ExpiryField } from './expiry-field.tsx';
import type { LinkEdits } from './link-editor.ts';
import { type LinkLike, LinkSettings } from './link-settings.tsx';

/** A public link's row in a Link part (a file's, an album's): the URL to select and a "Copy link" button. */
export function LinkRow(props: { label: string; url: string }) {
  return (
    <div class="share-link-row">
      <label class="field">
        <span>{props.label}</span>
        <input readOnly value={props.url} onFocus={(e) => e.currentTarget.select()} />
      </label>
      <button type="button" class="button" onClick={() => void copyText(props.url, 'Link copied')}>
        <Icon name="copy" size={18} /> Copy link
      </button>
    </div>
  );
}

/** A Link part before there is a link: what one would let people do (`children`), its expiry, and "Create link". */
export function NoLinkYet(props: { children: ComponentChildren; onExpiry: (choice: ExpiryChoice) => void; create: () => void }) {
  return (
    <div class="share-link-tab">
      <p class="muted">{props.children}</p>
      <ExpiryField legend="The link will expire after" expiresAt={undefined} onChange={props.onExpiry} />
      <button type="button" class="button primary" onClick={props.create}>
        <Icon name="link" size={18} /> Create link
      </button>
    </div>
  );
}

/**
 * A Link part's controls once there is a link: its expiry, its settings (a typed password is set on leaving its
 * field), "Set password" while one is typed, and "Remove link".
 */
export function LinkControls(props: {
  edits: LinkEdits;
  folders: boolean;
  link: LinkLike | null;
  expiresAt: string | null | undefined;
  onExpiry: (choice: ExpiryChoice) => void;
  remove: () => void;
}) {
  const { settings, change, saveOptions } = props.edits;
  return (
    <>
      <ExpiryField legend="Expires" expiresAt={props.expiresAt} onChange={props.onExpiry} />
      <div
        onFocusOut={(e) => {
          if ((e.target as HTMLElement).id === 'share-password' && settings.password) saveOptions(settings, true);
        }}
      >
        <LinkSettings folders={props.folders} link={props.link} value={settings} onChange={change} />
      </div>
      <div class="dialog-actions inline">
        {settings.password !== '' && (
          <button type="button" class="button" onClick={() => saveOptions(settings, true)}>
            Set password
          </button>
        )}
        <button type="button" class="button danger-ghost push-left" onClick={props.remove}>
          Remove link
        </button>
      </div>
    </>
  );
}
