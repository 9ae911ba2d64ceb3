// Owns the shape rules for values that are not free text: URLs (media, button links), media types
// and file names. Each check answers the problem to report, or null when the value is acceptable.
// It must never do I/O: whether a URL's host resolves, is public or answers is decided when the
// media is fetched (src/outbound), not here.
import { exceedsCharacters, isBlank } from './text.js';

/** Longest URL accepted, in UTF-16 units (URLs are ASCII once encoded; this bounds what we store). */
export const URL_MAX_LENGTH = 2048;
/** Longest file name, in user-perceived characters. */
export const FILE_NAME_MAX = 255;
/** Longest media type, parameters included. */
export const MIMETYPE_MAX_LENGTH = 255;

// The URL parser silently drops tabs and newlines, trims spaces and reads `\` as `/`; a URL that
// needs such repairs is refused rather than reinterpreted, so what we store is what is fetched.
const SPACE_OR_BACKSLASH = /[\s\\]/u;

/** True when `value` holds a C0 control character (NUL included) or DEL. */
export function hasControlCharacter(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const unit = value.charCodeAt(i);
    if (unit < 0x20 || unit === 0x7f) return true;
  }
  return false;
}

// Scheme, then `//`, then the first character of the host: `http:example.com` and `http:///x` are
// accepted by the URL parser but are not absolute URLs as a client means them.
const ABSOLUTE_HTTP = /^https?:\/\/[^/?#]/i;

/** Problem with the form of an absolute http(s) URL, or null. */
export function urlFormProblem(raw: string): string | null {
  if (raw.length > URL_MAX_LENGTH) return `must be at most ${URL_MAX_LENGTH} characters`;
  if (SPACE_OR_BACKSLASH.test(raw) || hasControlCharacter(raw))
    return 'must not contain spaces, control characters or backslashes';
  if (!ABSOLUTE_HTTP.test(raw)) return 'must be an absolute http or https URL';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute http or https URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an absolute http or https URL';
  if (url.hostname === '') return 'must have a host';
  // `http://@host` has an empty user name, but still carries the credentials syntax.
  const authority = /^https?:\/\/([^/?#]*)/i.exec(raw)?.[1] ?? '';
  if (url.username !== '' || url.password !== '' || authority.includes('@')) return 'must not contain credentials';
  return null;
}

// RFC 9110 media type: type "/" subtype, then optional `; name=value` parameters
// (e.g. `audio/ogg; codecs=opus`, the type of a voice note).
const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
const MEDIA_TYPE = new RegExp(
  `^${TOKEN}/${TOKEN}(?:[ \\t]*;[ \\t]*${TOKEN}=(?:${TOKEN}|"[^"\\\\\\u0000-\\u001f\\u007f]*"))*$`,
);

/** Problem with a media type such as `video/mp4`, or null. */
export function mimetypeProblem(value: string): string | null {
  if (value.length > MIMETYPE_MAX_LENGTH) return `must be at most ${MIMETYPE_MAX_LENGTH} characters`;
  if (!MEDIA_TYPE.test(value)) return 'must be a media type such as video/mp4';
  return null;
}

/** Problem with a file name shown to the recipient, or null. */
export function fileNameProblem(value: string): string | null {
  if (value.length === 0) return 'must not be empty';
  if (isBlank(value)) return 'must not be blank';
  if (exceedsCharacters(value, FILE_NAME_MAX)) return `must be at most ${FILE_NAME_MAX} characters`;
  if (value.includes('/')) return "must not contain '/'";
  if (hasControlCharacter(value)) return 'must not contain control characters';
  if (value === '.' || value === '..') return "must not be '.' or '..'";
  return null;
}
