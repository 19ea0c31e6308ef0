import { useEffect, useState } from 'preact/hooks';

/**
 * The link as a QR code (made by the server, `load`), for a phone across the room; hidden behind a button until
 * wanted. `link` names the link (its token or URL): a new one loads its own code.
 */
export function LinkQr(props: { link: string; name: string; load: () => Promise<string> }) {
  const [shown, setShown] = useState(false);
  const [src, setSrc] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    if (!shown) return;
    let live = true;
    props.load().then(
      (qr) => live && setSrc(qr),
      (err: Error) => live && setError(err.message),
    );
    return () => {
      live = false;
    };
  }, [shown, props.link]);
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
