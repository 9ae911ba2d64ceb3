/**
 * What the sandbox keeps of a message's media: its size and SHA-256, taken
 * while the bytes stream past (the phone's inbox shows them instead of the
 * bytes, docs/internals.md, The network seam and the sandbox).
 *
 * Owns: the message shape the world takes (media replaced by its digest) and
 * the incremental digest both transports build: the in-process adapter reads
 * the seam's MediaSource, the WebSocket server hashes the chunk frames.
 * Must never: keep a chunk after hashing it.
 */
import { createHash, type Hash } from 'node:crypto';
import type { MediaSource, NetworkMessageContent, OutgoingNetworkMessage } from '../network.js';

export interface MediaDigest {
  readonly size: number;
  readonly sha256: string;
}

/** Content as the world sees it: media types carry a digest where the seam carries a source. */
export type DigestedContent<C = NetworkMessageContent> = C extends { readonly media: MediaSource }
  ? Omit<C, 'media'> & { readonly media: MediaDigest }
  : C;

export interface SandboxMessage extends Omit<OutgoingNetworkMessage, 'content'> {
  readonly content: DigestedContent;
}

/** Hashes bytes as they come; `size` counts them. */
export class DigestBuilder {
  private readonly hash: Hash = createHash('sha256');
  size = 0;

  update(chunk: Uint8Array): void {
    this.hash.update(chunk);
    this.size += chunk.byteLength;
  }

  digest(): MediaDigest {
    return { size: this.size, sha256: this.hash.digest('hex') };
  }
}

/** The message with its media (if any) read once through and replaced by its digest. */
export async function digestMessage(message: OutgoingNetworkMessage): Promise<SandboxMessage> {
  const { content } = message;
  if (!('media' in content)) return message as SandboxMessage;
  const builder = new DigestBuilder();
  for await (const chunk of content.media.open()) builder.update(chunk);
  return withDigest(message, builder.digest());
}

/** The message (as sent, or as it came over the wire) with its media replaced by `digest`. */
export function withDigest(
  message: Omit<OutgoingNetworkMessage, 'content'> & { readonly content: object },
  digest: MediaDigest,
): SandboxMessage {
  return { ...message, content: { ...message.content, media: digest } as DigestedContent };
}
