import { useEffect, useState } from 'preact/hooks';
import { api } from '../api/index.ts';

/** The link as a QR code (made by the server), for a phone across the room; hidden behind a button until wanted. */
export function LinkQr(props: { token: string; name: string }) {
  const [shown, setShown] = useState(false);
  const [src, setSrc] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    if (!shown) return;
    let live = true;
    api.sharing.qrCode(props.token).then(
      (qr) => live && setSrc(qr),
      (err: Error) => live && setError(err.message),
    );
    return () => {
      live = false;
    };
  }, [shown, props.token]);
  return (
    <div class="link-qr">
      <button type="button" class="button" aria-expanded={shown} onClick={() => setShown(!shown)}>
        {shown ? 'Hide QR code' : 'Show QR code'}
      </button>
      {shown && src && <img src={src} width={160} height={160} alt={`QR code of the link to “${props.name}”`} />}
      {shown && error && (
        <p class="field-error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}
