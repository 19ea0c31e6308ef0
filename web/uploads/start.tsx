import { useState } from 'preact/hooks';
import type { Listing } from '../app/listings.ts';
import { type ConflictChoice, enqueueUploads, type NewUpload } from '../app/uploads.ts';
import { Dialog, openDialog } from '../ui/dialog.tsx';

function ConflictForm(props: { name: string; remaining: number; close: (v?: ConflictChoice) => void }) {
  const [all, setAll] = useState(false);
  return (
    <>
      <div class="dialog-body">
        <p>
          A file named <strong>{props.name}</strong> already exists in this folder. Replace it with the one you are uploading, or keep both
          (the new one gets a number)?
        </p>
        {props.remaining > 1 && (
          <label class="checkbox">
            <input type="checkbox" checked={all} onChange={(e) => setAll(e.currentTarget.checked)} />
            <span>Do this for all {props.remaining} files with existing names</span>
          </label>
        )}
      </div>
      <div class="dialog-actions">
        <button type="button" class="button push-left" onClick={() => props.close()}>
          Skip
        </button>
        <button type="button" class="button" onClick={() => props.close({ replace: true, all })}>
          Replace
        </button>
        <button type="button" class="button primary" autofocus onClick={() => props.close({ replace: false, all })}>
          Keep both
        </button>
      </div>
    </>
  );
}

const askConflict = (name: string, remaining: number) =>
  openDialog<ConflictChoice>((close) => (
    <Dialog title="Replace or keep both?" onClose={() => close()}>
      <ConflictForm name={name} remaining={remaining} close={close} />
    </Dialog>
  )).then((v) => v ?? null);

/** Starts uploading into a folder, asking about names that exist there; `folders` are empty ones to make. */
export function startUploads(
  files: NewUpload[],
  parentId: string | null,
  listing: Listing | null = null,
  folders: string[] = [],
): Promise<void> {
  return enqueueUploads(files, parentId, { listing, askConflict, folders });
}
