import { toast } from '../app/toasts.ts';

/**
 * Puts text on the clipboard. Plain-http LAN pages have no clipboard API: then the text is selected
 * (in `field` when given, else in a scratch text box) and copied with the old command.
 */
export async function copyText(text: string, done: string, field?: HTMLInputElement | HTMLTextAreaElement | null): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    const scratch = field ? null : document.createElement('textarea');
    const target = field ?? scratch!;
    if (scratch) {
      scratch.value = text;
      scratch.readOnly = true;
      scratch.className = 'scratch';
      document.body.append(scratch);
    }
    target.select();
    const copied = document.execCommand('copy');
    scratch?.remove();
    if (!copied) {
      toast('This browser did not allow copying. Select the text and copy it by hand.', { kind: 'error' });
      return;
    }
  }
  toast(done);
}

/** Offers text as a file download made in the page (nothing is sent anywhere). */
export function downloadText(text: string, fileName: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: 'text/plain;charset=utf-8' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = fileName;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
