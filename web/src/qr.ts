/**
 * Reads a QR code from an image on the page, in the browser, the way a phone's
 * camera would: draw the pixels, decode them. The sandbox's virtual phone
 * scans with this; no shortcut route gives it the code.
 */
export async function decodeQrImage(image: HTMLImageElement): Promise<string> {
  // Loaded on first use: only the sandbox's virtual phone needs a decoder.
  const { default: jsQR } = await import('jsqr');
  const canvas = document.createElement('canvas');
  canvas.width = image.naturalWidth;
  canvas.height = image.naturalHeight;
  const context = canvas.getContext('2d', { willReadFrequently: true });
  if (context === null || canvas.width === 0) throw new Error('The QR image is not loaded yet');
  context.drawImage(image, 0, 0);
  const pixels = context.getImageData(0, 0, canvas.width, canvas.height);
  const code = jsQR(pixels.data, pixels.width, pixels.height);
  if (code === null) throw new Error('No QR code could be read from the image');
  return code.data;
}

/** Resolves once the image shows its current source. */
export function loaded(image: HTMLImageElement): Promise<void> {
  if (image.complete && image.naturalWidth > 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    image.addEventListener('load', () => resolve(), { once: true });
    image.addEventListener('error', () => reject(new Error('The QR image could not be shown')), { once: true });
  });
}
