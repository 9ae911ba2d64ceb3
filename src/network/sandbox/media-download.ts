/**
 * Incoming media of the sandbox: a phone's media message names an http(s) address (PhoneMessage.mediaUrl) and the
 * device downloads the bytes from there, streamed, when the gateway asks (NetworkConnection.downloadMedia).
 *
 * Owns: the sandbox's media reference (`{"url": ...}` as JSON) and reading it back into a download: a 2xx answer's
 * body as it arrives; a 404 or 410 is `permanent` (the media is gone), any other failure `transient`.
 * Must never: hold the bytes (the reader reads them as they come), or follow a reference that is not its own.
 */
import { get as httpGet, type IncomingMessage } from 'node:http';
import { get as httpsGet } from 'node:https';
import { NetworkMediaError, type IncomingMedia } from '../network.js';

/** How long the media host may take to start answering. */
const ANSWER_TIMEOUT_MS = 30_000;

export function sandboxMediaRef(url: string): string {
  return JSON.stringify({ url });
}

function urlOf(ref: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(ref);
  } catch {
    parsed = null;
  }
  const url = (parsed as { url?: unknown } | null)?.url;
  if (typeof url !== 'string' || !/^https?:\/\//.test(url)) {
    throw new NetworkMediaError('not a sandbox media reference', 'permanent');
  }
  return url;
}

export async function downloadSandboxMedia(media: IncomingMedia): Promise<AsyncIterable<Uint8Array>> {
  const url = urlOf(media.ref);
  // node:http rather than fetch: its response is read off the socket only as fast as the reader takes it.
  const get = url.startsWith('https:') ? httpsGet : httpGet;
  const response = await new Promise<IncomingMessage>((resolve, reject) => {
    const request = get(url, { timeout: ANSWER_TIMEOUT_MS }, resolve);
    request.on('timeout', () => request.destroy(new Error('no answer in time')));
    request.on('error', (error) =>
      reject(new NetworkMediaError(`media host unreachable: ${error.message}`, 'transient')),
    );
  });
  const status = response.statusCode ?? 0;
  if (status < 200 || status >= 300) {
    response.destroy();
    const gone = status === 404 || status === 410;
    throw new NetworkMediaError(`media host answered ${status}`, gone ? 'permanent' : 'transient');
  }
  response.setTimeout(0);
  return response;
}
