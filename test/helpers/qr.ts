// Reads a QR code the way a phone camera would: decode the PNG, then the code.
import jsQRModule from 'jsqr';
import { PNG } from 'pngjs';

// jsqr is CommonJS with a default export; under ESM it arrives wrapped.
type Decode = (data: Uint8ClampedArray, width: number, height: number) => { data: string } | null;
const jsQR: Decode = (jsQRModule as unknown as { default?: Decode }).default ?? (jsQRModule as unknown as Decode);

export function decodeQrDataUrl(dataUrl: string): string {
  const prefix = 'data:image/png;base64,';
  if (!dataUrl.startsWith(prefix)) throw new Error(`not a PNG data URL: ${dataUrl.slice(0, 40)}`);
  const png = PNG.sync.read(Buffer.from(dataUrl.slice(prefix.length), 'base64'));
  const code = jsQR(new Uint8ClampedArray(png.data), png.width, png.height);
  if (code === null) throw new Error('no QR code found in the image');
  return code.data;
}
