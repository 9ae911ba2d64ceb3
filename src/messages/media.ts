// Owns the parameters of the media message types (image, video, audio, file): which fields each
// takes, the form of its URL, its size limit, and what is echoed back as `params`. It must never
// fetch anything or judge the address a URL points to: it only describes the download for the
// code that does it (src/outbound), which also decides the real format from the bytes.
import { fileNameProblem, mimetypeProblem, urlFormProblem } from './forms.js';
import { field, isRecord, join, readFlag, readText, type Problems } from './problems.js';
import { TEXT_MAX } from './limits.js';

export type MediaKind = 'image' | 'video' | 'audio' | 'file';

const MiB = 1024 * 1024;

/** Largest download per kind, in bytes (spec 8 for images; DECISIONS 5 for the others). */
export const MEDIA_LIMITS: Record<MediaKind, number> = {
  image: 16 * MiB,
  video: 64 * MiB,
  audio: 16 * MiB,
  file: 100 * MiB,
};

export interface MediaRequest {
  kind: MediaKind;
  url: string;
  maxBytes: number;
  /** The media type the client declared, or null (the fetcher then relies on the bytes). */
  mimetype: string | null;
  fileName: string | null;
  caption: string | null;
  viewOnce: boolean;
}

interface MediaShape {
  /** The params field holding `{url}`. */
  readonly container: string;
  readonly urlError: 'INVALID_IMAGE_URL' | 'INVALID_MEDIA_URL';
  readonly caption: boolean;
  readonly viewOnce: boolean;
  readonly mimetype: boolean;
  readonly fileName: boolean;
}

const SHAPES: Record<MediaKind, MediaShape> = {
  image: {
    container: 'image',
    urlError: 'INVALID_IMAGE_URL',
    caption: true,
    viewOnce: true,
    mimetype: false,
    fileName: false,
  },
  video: {
    container: 'video',
    urlError: 'INVALID_MEDIA_URL',
    caption: true,
    viewOnce: true,
    mimetype: true,
    fileName: false,
  },
  audio: {
    container: 'audio',
    urlError: 'INVALID_MEDIA_URL',
    caption: false,
    viewOnce: false,
    mimetype: true,
    fileName: false,
  },
  file: {
    container: 'document',
    urlError: 'INVALID_MEDIA_URL',
    caption: true,
    viewOnce: false,
    mimetype: true,
    fileName: true,
  },
};

export interface ParsedMedia {
  /** Normalised params: the URL container, then the optional fields that were given. */
  params: Record<string, unknown>;
  media: MediaRequest;
  /** The caption, shown as the Message's `message`. */
  message: string | null;
}

/** Reads the params of a media message; problems are recorded, and the result is only meaningful when there are none. */
export function parseMedia(kind: MediaKind, params: Record<string, unknown>, problems: Problems): ParsedMedia {
  const shape = SHAPES[kind];
  const containerPath = join('params', shape.container);
  const urlPath = join(containerPath, 'url');
  const container = field(params, shape.container);
  let url: string | undefined;
  if (container === undefined) {
    problems.add('VALIDATION_FAILED', urlPath, 'is required');
  } else if (!isRecord(container)) {
    problems.add('VALIDATION_FAILED', containerPath, 'must be an object with a url');
  } else {
    const value = field(container, 'url');
    if (value === undefined) problems.add('VALIDATION_FAILED', urlPath, 'is required');
    else if (typeof value !== 'string') problems.add('VALIDATION_FAILED', urlPath, 'must be a string');
    else {
      const problem = urlFormProblem(value);
      if (problem === null) url = value;
      else problems.add(shape.urlError, urlPath, problem);
    }
  }

  let mimetype: string | undefined;
  if (shape.mimetype) {
    const value = field(params, 'mimetype');
    if (value !== undefined) {
      const problem = typeof value === 'string' ? mimetypeProblem(value) : 'must be a string';
      if (problem === null) mimetype = value as string;
      else problems.add('VALIDATION_FAILED', 'params.mimetype', problem);
    }
  }

  let fileName: string | undefined;
  if (shape.fileName) {
    const value = field(params, 'fileName');
    const problem =
      value === undefined ? 'is required' : typeof value === 'string' ? fileNameProblem(value) : 'must be a string';
    if (problem === null) fileName = value as string;
    else problems.add('VALIDATION_FAILED', 'params.fileName', problem);
  }

  const caption = shape.caption
    ? readText(problems, 'params.caption', field(params, 'caption'), {
        max: TEXT_MAX,
        required: false,
        code: 'VALIDATION_FAILED',
        tooLong: 'MESSAGE_TOO_LONG',
      })
    : undefined;
  const viewOnce = shape.viewOnce ? readFlag(problems, 'params.viewOnce', field(params, 'viewOnce')) : undefined;

  const echoed: Record<string, unknown> = { [shape.container]: { url: url ?? '' } };
  if (fileName !== undefined) echoed.fileName = fileName;
  if (mimetype !== undefined) echoed.mimetype = mimetype;
  if (caption !== undefined) echoed.caption = caption;
  if (viewOnce !== undefined) echoed.viewOnce = viewOnce;

  return {
    params: echoed,
    media: {
      kind,
      url: url ?? '',
      maxBytes: MEDIA_LIMITS[kind],
      mimetype: mimetype ?? null,
      fileName: fileName ?? null,
      caption: caption ?? null,
      viewOnce: viewOnce ?? false,
    },
    message: caption ?? null,
  };
}
