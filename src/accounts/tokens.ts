/**
 * API token secrets: how they are made and how they are recognised.
 *
 * Owns: the token format (`mgw_` + 32 random bytes, base64url) and its hash.
 * Must never: store or log a secret; only the SHA-256 hash and a short
 * display prefix leave this module.
 */
import { createHash, randomBytes } from 'node:crypto';

export const TOKEN_PREFIX = 'mgw_';
const DISPLAY_PREFIX_LENGTH = TOKEN_PREFIX.length + 8;

export function generateTokenSecret(): string {
  return TOKEN_PREFIX + randomBytes(32).toString('base64url');
}

export function hashToken(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

export function displayPrefix(secret: string): string {
  return secret.slice(0, DISPLAY_PREFIX_LENGTH);
}

/** Extracts the secret from an `Authorization: Bearer <token>` header; null if malformed. */
export function bearerSecret(header: string | undefined): string | null {
  if (header === undefined) return null;
  const match = /^Bearer[ \t]+([\x21-\x7e]{16,512})[ \t]*$/i.exec(header);
  return match?.[1] ?? null;
}
