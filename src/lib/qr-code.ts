import QRCode from 'qrcode';

/** A link's URL as a QR code: a PNG data URL, 240 px with a one-module margin, for a phone across the room. */
export function qrCodeOf(url: string): Promise<string> {
  return QRCode.toDataURL(url, { type: 'image/png', margin: 1, width: 240 });
}
