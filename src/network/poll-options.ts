/**
 * How a network may name a poll's options in a vote (docs/webhooks.md, Poll votes): by their text, or by the
 * SHA-256 of their text, as WhatsApp votes do (the connector keeps a poll's secret, not its texts).
 *
 * Owns: the hash of an option's text, and matching hashes back to a poll's options.
 * Must never: import anything but node's crypto, or hold state.
 */
import { createHash } from 'node:crypto';

/** The lowercase hex SHA-256 of an option's text (UTF-8): WhatsApp's name for it in a vote. */
export function pollOptionHash(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** The options `hashes` name, in the poll's order; null when one names no option of the poll. */
export function optionsForHashes(options: ReadonlyArray<string>, hashes: ReadonlyArray<string>): string[] | null {
  const byHash = new Map(options.map((option) => [pollOptionHash(option), option]));
  const chosen = new Set<string>();
  for (const hash of hashes) {
    const option = byHash.get(hash.toLowerCase());
    if (option === undefined) return null;
    chosen.add(option);
  }
  return options.filter((option) => chosen.has(option));
}
