// Owns recognising a file's format from its leading bytes (our own checks for the formats sent as
// image, video and audio; the `file-type` library for documents, whose formats are many). It must never look at a Content-Type
// header, a file name or an extension: those come from whoever serves the URL and may lie. It must
// answer null whenever it is not sure; a wrong "yes" would let unexpected bytes through as media.

import { fileTypeFromBuffer } from 'file-type';

export type ImageType = 'image/jpeg' | 'image/png' | 'image/gif' | 'image/webp';

function startsWith(bytes: Uint8Array, signature: readonly number[], offset = 0): boolean {
  if (bytes.length < offset + signature.length) return false;
  return signature.every((value, i) => bytes[offset + i] === value);
}

function ascii(text: string): number[] {
  return Array.from(text, (char) => char.charCodeAt(0));
}

function asciiAt(bytes: Uint8Array, offset: number, length: number): string {
  if (bytes.length < offset + length) return '';
  return String.fromCharCode(...bytes.subarray(offset, offset + length));
}

function includesAscii(bytes: Uint8Array, text: string, limit: number): boolean {
  return Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, limit)).includes(text, 0, 'latin1');
}

const RIFF = ascii('RIFF');

/** The image type by magic bytes (JPEG, PNG, GIF, WebP), or null for anything else. */
export function sniffImageType(bytes: Uint8Array): ImageType | null {
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (startsWith(bytes, ascii('GIF87a')) || startsWith(bytes, ascii('GIF89a'))) return 'image/gif';
  // "RIFF" <size> "WEBPVP" as in the WHATWG MIME sniffing standard: the VP8/VP8L/VP8X chunk
  // separates a WebP from other RIFF payloads that merely claim "WEBP".
  if (startsWith(bytes, RIFF) && startsWith(bytes, ascii('WEBPVP'), 8)) return 'image/webp';
  return null;
}

// ISO base media (MP4 family): the first box is "ftyp" with a major brand and compatible brands.
function sniffFtyp(bytes: Uint8Array): string | null {
  if (asciiAt(bytes, 4, 4) !== 'ftyp' || bytes.length < 12) return null;
  const boxSize = (((bytes[0] ?? 0) << 24) | ((bytes[1] ?? 0) << 16) | ((bytes[2] ?? 0) << 8) | (bytes[3] ?? 0)) >>> 0;
  if (boxSize < 12) return null;
  const major = asciiAt(bytes, 8, 4);
  if (major.startsWith('3gp')) return 'video/3gpp';
  if (major.startsWith('3g2')) return 'video/3gpp2';
  if (major === 'qt  ') return 'video/quicktime';
  if (['M4A ', 'M4B ', 'M4P ', 'F4A ', 'F4B '].includes(major)) return 'audio/mp4';
  const brands = [major];
  for (let offset = 16; offset + 4 <= Math.min(boxSize, bytes.length); offset += 4) {
    brands.push(asciiAt(bytes, offset, 4));
  }
  // HEIF/AVIF images and other ftyp files share the box but are not MP4 video.
  const mp4Brands = /^(isom|iso[2-9]|mp41|mp42|mp71|avc1|dash|mmp4|M4V |M4VH|M4VP|F4V |f4v |MSNV|NDAS)$/;
  return brands.some((brand) => mp4Brands.test(brand)) ? 'video/mp4' : null;
}

// MPEG audio frame header: 11 sync bits, then version, layer, bitrate and sample rate fields that
// have reserved values; rejecting those keeps random 0xFF-led data from passing as MP3.
function isMpegAudioFrame(bytes: Uint8Array): boolean {
  const [b0, b1, b2] = bytes;
  if (b0 !== 0xff || b1 === undefined || b2 === undefined || (b1 & 0xe0) !== 0xe0) return false;
  const version = (b1 >> 3) & 0b11;
  const layer = (b1 >> 1) & 0b11;
  const bitrate = b2 >> 4;
  const sampleRate = (b2 >> 2) & 0b11;
  return version !== 0b01 && layer !== 0b00 && bitrate !== 0b1111 && sampleRate !== 0b11;
}

/**
 * The media type by magic bytes for the formats the gateway sends as image, video, audio or
 * document; null when unknown. ZIP-based formats (docx, xlsx, ...) are all 'application/zip'.
 */
export function sniffMediaType(bytes: Uint8Array): string | null {
  const image = sniffImageType(bytes);
  if (image) return image;

  const ftyp = sniffFtyp(bytes);
  if (ftyp) return ftyp;

  if (startsWith(bytes, ascii('OggS'))) {
    return includesAscii(bytes, '\x80theora', 64) ? 'video/ogg' : 'audio/ogg';
  }
  if (startsWith(bytes, RIFF)) {
    const form = asciiAt(bytes, 8, 4);
    if (form === 'WAVE') return 'audio/wav';
    if (form === 'AVI ') return 'video/x-msvideo';
    return null;
  }
  if (startsWith(bytes, [0x1a, 0x45, 0xdf, 0xa3])) {
    if (includesAscii(bytes, 'webm', 64)) return 'video/webm';
    if (includesAscii(bytes, 'matroska', 64)) return 'video/x-matroska';
    return null;
  }
  if (startsWith(bytes, ascii('#!AMR-WB\n'))) return 'audio/amr-wb';
  if (startsWith(bytes, ascii('#!AMR\n'))) return 'audio/amr';
  if (startsWith(bytes, ascii('fLaC'))) return 'audio/flac';
  if (startsWith(bytes, ascii('ID3'))) return 'audio/mpeg';
  // ADTS AAC shares MP3's sync bits but has layer 00.
  if (bytes[0] === 0xff && bytes[1] !== undefined && (bytes[1] & 0xf6) === 0xf0) return 'audio/aac';
  if (isMpegAudioFrame(bytes)) return 'audio/mpeg';
  if (startsWith(bytes, ascii('%PDF-'))) return 'application/pdf';
  if (startsWith(bytes, [0x50, 0x4b]) && [0x0304, 0x0506, 0x0708].includes(((bytes[2] ?? 0) << 8) | (bytes[3] ?? 0))) {
    return 'application/zip';
  }
  // OLE compound file: legacy .doc/.xls/.ppt.
  if (startsWith(bytes, [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1])) return 'application/x-cfb';
  return null;
}

/**
 * The media type of a document by its leading bytes, for the recipient's viewer: the `file-type`
 * library's answer (it tells a .docx from a .xlsx, which are both ZIP), else sniffMediaType's;
 * null when neither knows (plain text has no signature).
 */
export async function sniffDocumentType(bytes: Uint8Array): Promise<string | null> {
  const known = await fileTypeFromBuffer(bytes).catch(() => undefined);
  return known?.mime ?? sniffMediaType(bytes);
}
