// Format recognition from leading bytes: real fixture files, minimal hand-made headers for formats
// without a fixture, and bytes that must not be mistaken for media.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sniffDocumentType, sniffImageType, sniffMediaType } from '../../src/outbound/index.js';
import { fixture } from './helpers.js';

function bytes(...parts: Array<string | number[]>): Uint8Array {
  return Buffer.concat(
    parts.map((part) => (typeof part === 'string' ? Buffer.from(part, 'latin1') : Buffer.from(part))),
  );
}

function ftyp(major: string, ...compatible: string[]): Uint8Array {
  const size = 16 + 4 * compatible.length;
  return bytes([0, 0, 0, size], 'ftyp', major, [0, 0, 0, 0], ...compatible);
}

describe('sniffImageType', () => {
  it.each([
    ['tiny.jpg', 'image/jpeg'],
    ['tiny.png', 'image/png'],
    ['tiny.gif', 'image/gif'],
    ['tiny.webp', 'image/webp'],
  ])('recognises the real file %s as %s', (name, type) => {
    expect(sniffImageType(fixture(name))).toBe(type);
    expect(sniffMediaType(fixture(name))).toBe(type);
  });

  it('recognises GIF87a', () => {
    expect(sniffImageType(bytes('GIF87a', [1, 0, 1, 0]))).toBe('image/gif');
  });

  it.each([
    ['empty', bytes()],
    ['text', bytes('This is not a PNG, whatever the Content-Type says.')],
    ['HTML', bytes('<!doctype html><html></html>')],
    ['truncated PNG signature', bytes([0x89, 0x50, 0x4e, 0x47])],
    ['truncated JPEG', bytes([0xff, 0xd8])],
    ['RIFF WAVE', bytes('RIFF', [0, 0, 0, 0], 'WAVEfmt ')],
    ['RIFF claiming WEBP without a VP8 chunk', bytes('RIFF', [0, 0, 0, 0], 'WEBPJUNK')],
    ['GIF without a version', bytes('GIF8')],
    ['SVG', bytes('<svg xmlns="http://www.w3.org/2000/svg"/>')],
    ['MP4', fixture('tiny.mp4')],
  ])('answers null for %s', (_label, data) => {
    expect(sniffImageType(data)).toBeNull();
  });

  it('answers null for any printable text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme-ascii', maxLength: 64 }), (text) => {
        expect(sniffImageType(bytes(text))).toBeNull();
      }),
    );
  });

  it('looks at the bytes of a view, not at the whole underlying buffer', () => {
    const png = fixture('tiny.png');
    const shifted = new Uint8Array(png.length + 3);
    shifted.set(png, 3);
    expect(sniffImageType(shifted.subarray(3))).toBe('image/png');
    expect(sniffImageType(shifted)).toBeNull();
  });
});

describe('sniffMediaType', () => {
  it('recognises the real MP4 fixture', () => {
    expect(sniffMediaType(fixture('tiny.mp4'))).toBe('video/mp4');
  });

  it('recognises the real Ogg/Opus fixture', () => {
    expect(sniffMediaType(fixture('tiny.ogg'))).toBe('audio/ogg');
  });

  it.each([
    ['mp4 (isom)', ftyp('isom', 'isom', 'mp41'), 'video/mp4'],
    ['mp4 (mp42)', ftyp('mp42', 'mp42', 'isom'), 'video/mp4'],
    ['mp4 (unknown major, mp4 compatible)', ftyp('XYZ1', 'mp42'), 'video/mp4'],
    ['3gp', ftyp('3gp4', 'isom', '3gp4'), 'video/3gpp'],
    ['3g2', ftyp('3g2a', '3g2a'), 'video/3gpp2'],
    ['quicktime', ftyp('qt  ', 'qt  '), 'video/quicktime'],
    ['m4a', ftyp('M4A ', 'M4A ', 'mp42', 'isom'), 'audio/mp4'],
    ['ogg theora', bytes('OggS', new Array<number>(24).fill(0), [0x80], 'theora'), 'video/ogg'],
    ['ogg vorbis', bytes('OggS', new Array<number>(24).fill(0), [0x01], 'vorbis'), 'audio/ogg'],
    ['mp3 with ID3 tag', bytes('ID3', [4, 0, 0, 0, 0, 0, 0]), 'audio/mpeg'],
    ['mp3 frame (MPEG-1 layer III, 128 kbit/s, 44.1 kHz)', bytes([0xff, 0xfb, 0x90, 0x64]), 'audio/mpeg'],
    ['mp3 frame (MPEG-2 layer III)', bytes([0xff, 0xf3, 0x48, 0xc4]), 'audio/mpeg'],
    ['aac ADTS', bytes([0xff, 0xf1, 0x50, 0x80]), 'audio/aac'],
    ['amr', bytes('#!AMR\n', [0x3c]), 'audio/amr'],
    ['amr-wb', bytes('#!AMR-WB\n', [0x04]), 'audio/amr-wb'],
    ['wav', bytes('RIFF', [0x24, 0, 0, 0], 'WAVEfmt '), 'audio/wav'],
    ['avi', bytes('RIFF', [0x24, 0, 0, 0], 'AVI LIST'), 'video/x-msvideo'],
    ['flac', bytes('fLaC', [0, 0, 0, 0x22]), 'audio/flac'],
    ['webm', bytes([0x1a, 0x45, 0xdf, 0xa3, 0x9f, 0x42, 0x86, 0x81, 0x01, 0x42, 0x82, 0x84], 'webm'), 'video/webm'],
    ['mkv', bytes([0x1a, 0x45, 0xdf, 0xa3, 0xa3, 0x42, 0x82, 0x88], 'matroska'), 'video/x-matroska'],
    ['pdf', bytes('%PDF-1.7\n'), 'application/pdf'],
    ['zip / docx', bytes('PK', [3, 4, 20, 0]), 'application/zip'],
    ['empty zip', bytes('PK', [5, 6, 0, 0]), 'application/zip'],
    ['ole (legacy office)', bytes([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]), 'application/x-cfb'],
  ])('recognises %s', (_label, data, type) => {
    expect(sniffMediaType(data)).toBe(type);
  });

  it.each([
    ['empty', bytes()],
    ['text', bytes('hello world')],
    ['HEIF image (ftyp, but not MP4)', ftyp('heic', 'mif1', 'heic')],
    ['AVIF image', ftyp('avif', 'avif', 'mif1')],
    ['ftyp box too small', bytes([0, 0, 0, 4], 'ftypisom')],
    ['MPEG frame with reserved bitrate', bytes([0xff, 0xfb, 0xf0, 0x64])],
    ['MPEG frame with reserved sample rate', bytes([0xff, 0xfb, 0x9c, 0x64])],
    ['EBML without a known doctype', bytes([0x1a, 0x45, 0xdf, 0xa3, 0x80])],
    ['RIFF of an unknown form', bytes('RIFF', [0, 0, 0, 0], 'ACON')],
    ['PK without a zip record', bytes('PK', [1, 2])],
  ])('answers null for %s', (_label, data) => {
    expect(sniffMediaType(data)).toBeNull();
  });
});

describe('sniffDocumentType', () => {
  it.each([
    ['tiny.docx', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'],
    ['tiny.png', 'image/png'],
    ['tiny.mp4', 'video/mp4'],
  ])('recognises the real file %s as %s', async (name, type) => {
    expect(await sniffDocumentType(fixture(name))).toBe(type);
  });

  it('recognises a PDF, and answers null for plain text and nothing', async () => {
    expect(await sniffDocumentType(bytes('%PDF-1.7\n%more'))).toBe('application/pdf');
    expect(await sniffDocumentType(bytes('name,amount\nTea,2\n'))).toBeNull();
    expect(await sniffDocumentType(bytes())).toBeNull();
  });
});
