/** A link's URL as a QR code: a PNG data URL, 240 px with a one-module margin, for a phone across the room. */
export async function qrCodeOf(url: string): Promise<string> {
  // Loaded at the first QR code asked for: the idle server does not carry it.
  const { default: QRCode } = await import('qrcode');
  return QRCode.toDataURL(url, { type: 'image/png', margin: 1, width: 240 });
}
