/**
 * Incoming media of the sandbox: a phone's media message names an http(s) address (PhoneMessage.mediaUrl) and the
 * device downloads the bytes from there, streamed, when the gateway asks (NetworkConnection.downloadMedia).
 *
 * Owns: the sandbox's media reference (`{"url": ...}` as JSON) and reading it back into a download: a 2xx answer's
 * body as it arrives; a 404 or 410 is `permanent` (the media is gone), any other failure `transient`.
 * Must never: hold the bytes (the reader reads them as they come), or follow a reference that is not its own.
 */
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
  const answered = new AbortController();
  const timer = setTimeout(() => answered.abort(), ANSWER_TIMEOUT_MS);
  let response: Response;
  try {
    response = await fetch(url, { signal: answered.signal, redirect: 'error' });
  } catch (error) {
    throw new NetworkMediaError(`media host unreachable: ${(error as Error).message}`, 'transient');
  } finally {
    clearTimeout(timer);
  }
  if (!response.ok || response.body === null) {
    await response.body?.cancel().catch(() => undefined);
    const gone = response.status === 404 || response.status === 410;
    throw new NetworkMediaError(`media host answered ${response.status}`, gone ? 'permanent' : 'transient');
  }
  return response.body as unknown as AsyncIterable<Uint8Array>;
}
