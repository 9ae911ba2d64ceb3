// Owns what a valid media message (image, video, audio, file, sticker) becomes: its size limit, the
// download it asks for, and what is echoed back as `params` (the rules of its params are in
// src/messages/schemas.ts). It must never fetch anything or judge the address a URL points to: it
// only describes the download for the code that does it (src/outbound), which also decides the
// real format from the bytes.
import { parse as parseDisposition } from 'content-disposition';
import { fileNameProblem } from './forms.js';

export type MediaKind = 'image' | 'video' | 'audio' | 'file' | 'sticker';

const MiB = 1024 * 1024;

/** Largest download per kind, in bytes (spec 8 for images; docs/internals.md, Sending for the others). */
export const MEDIA_LIMITS: Record<MediaKind, number> = {
  image: 16 * MiB,
  video: 64 * MiB,
  audio: 16 * MiB,
  file: 100 * MiB,
  sticker: 1 * MiB,
};

export interface MediaRequest {
  kind: MediaKind;
  url: string;
  maxBytes: number;
  /** The media type the client declared, or null (the fetcher then relies on the bytes). */
  mimetype: string | null;
  /**
   * The file's name: the one given, else the URL's last path segment; null for a file whose URL
   * names none (the answer's Content-Disposition then names it, else "file": fileNameAfterFetch).
   */
  fileName: string | null;
  caption: string | null;
  viewOnce: boolean;
}

/** The params field holding `{url}`, and the fields each kind takes besides it. */
const CONTAINER: Record<MediaKind, string> = {
  image: 'image',
  video: 'video',
  audio: 'audio',
  file: 'document',
  sticker: 'sticker',
};

export interface BuiltMedia {
  /** Normalised params: the URL container, then the optional fields that were given. */
  params: Record<string, unknown>;
  media: MediaRequest;
  /** The caption, shown as the Message's `message`. */
  message: string | null;
}

/** A valid file name, or null: the last segment of a path, as a file name cannot hold a '/'. */
function usableName(candidate: string): string | null {
  const base = candidate.slice(Math.max(candidate.lastIndexOf('/'), candidate.lastIndexOf('\\')) + 1);
  return base !== '' && fileNameProblem(base) === null ? base : null;
}

/** The URL's last path segment when it is a valid file name (docs/internals.md, Whatspie compatibility), else null. */
export function fileNameFromUrl(url: string): string | null {
  try {
    const path = new URL(url).pathname;
    return usableName(decodeURIComponent(path.slice(path.lastIndexOf('/') + 1)));
  } catch {
    return null;
  }
}

/** The file name a Content-Disposition header gives (`filename*` before `filename`), when valid. */
export function fileNameFromDisposition(header: string | null): string | null {
  if (header === null) return null;
  try {
    const name = parseDisposition(header).parameters.filename;
    return typeof name === 'string' ? usableName(name) : null;
  } catch {
    return null;
  }
}

/**
 * The name of a file the client did not name (docs/internals.md, Whatspie compatibility), in this order: the URL's last path
 * segment (already in `media.fileName` when it was one), the download's Content-Disposition, "file".
 * The URL comes first because it is what the client chose to send.
 */
export function fileNameAfterFetch(media: MediaRequest, contentDisposition: string | null): string {
  return media.fileName ?? fileNameFromDisposition(contentDisposition) ?? 'file';
}

/**
 * The media request of valid canonical params (src/messages/schemas.ts checked them): only the
 * fields the kind takes, an empty caption treated as none.
 */
export function buildMedia(kind: MediaKind, params: Record<string, unknown>): BuiltMedia {
  const container = CONTAINER[kind];
  const url = (params[container] as { url: string }).url;
  const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);
  const fileName = kind === 'file' ? (text(params.fileName) ?? fileNameFromUrl(url) ?? undefined) : undefined;
  const mimetype = kind === 'image' || kind === 'sticker' ? undefined : text(params.mimetype);
  const caption = kind === 'audio' || kind === 'sticker' ? undefined : text(params.caption);
  const viewOnce = kind === 'image' || kind === 'video' ? (params.viewOnce as boolean | undefined) : undefined;

  const echoed: Record<string, unknown> = { [container]: { url } };
  if (fileName !== undefined) echoed.fileName = fileName;
  if (mimetype !== undefined) echoed.mimetype = mimetype;
  if (caption !== undefined) echoed.caption = caption;
  if (viewOnce !== undefined) echoed.viewOnce = viewOnce;
  // A voice note (audio only): kept in the params, read back from there when the message is sent.
  if (kind === 'audio' && typeof params.ptt === 'boolean') echoed.ptt = params.ptt;
  return {
    params: echoed,
    media: {
      kind,
      url,
      maxBytes: MEDIA_LIMITS[kind],
      mimetype: mimetype ?? null,
      fileName: fileName ?? null,
      caption: caption ?? null,
      viewOnce: viewOnce ?? false,
    },
    message: caption ?? null,
  };
}
