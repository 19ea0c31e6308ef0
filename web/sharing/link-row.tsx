import { copyText } from '../ui/copy.ts';
import { Icon } from '../ui/icons.tsx';

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

/** A Link part's last row: "Set password" while one is typed, and "Remove link". */
export function LinkFooter(props: { password: boolean; setPassword: () => void; remove: () => void }) {
  return (
    <div class="dialog-actions inline">
      {props.password && (
        <button type="button" class="button" onClick={props.setPassword}>
          Set password
        </button>
      )}
      <button type="button" class="button danger-ghost push-left" onClick={props.remove}>
        Remove link
      </button>
    </div>
  );
}
