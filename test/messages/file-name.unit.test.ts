// docs/internals.md, Whatspie compatibility: a file the client did not name is named by its URL's last path segment, else by the
// download's Content-Disposition, else "file"; every name is a valid file name (no path, no controls).
import { describe, expect, it } from 'vitest';
import {
  fileNameAfterFetch,
  fileNameFromDisposition,
  fileNameFromUrl,
  type MediaRequest,
} from '../../src/messages/media.js';

const media = (fileName: string | null): MediaRequest => ({
  kind: 'file',
  url: 'https://x.test/download',
  maxBytes: 1,
  mimetype: null,
  fileName,
  caption: null,
  viewOnce: false,
});

describe('file names', () => {
  it.each([
    ['attachment; filename="report Q3.pdf"', 'report Q3.pdf'],
    ['inline; filename=plain.txt', 'plain.txt'],
    // RFC 6266: filename* (RFC 8187, UTF-8) wins over the ASCII fallback.
    [`attachment; filename="resume.pdf"; filename*=UTF-8''r%C3%A9sum%C3%A9.pdf`, 'résumé.pdf'],
    // A path is never a name: its last segment is.
    ['attachment; filename="../../etc/passwd"', 'passwd'],
    ['attachment; filename="C:\\\\Users\\\\a\\\\b.doc"', 'b.doc'],
  ])('reads %s as %s', (header, name) => {
    expect(fileNameFromDisposition(header)).toBe(name);
  });

  it.each([
    [null],
    ['attachment'],
    ['inline'],
    ['attachment; filename=""'],
    ['attachment; filename=".."'],
    ['attachment; filename="a\u0001b"'],
    ['garbage;;='],
    ['attachment; filename="unterminated'],
    [`attachment; filename="${'a'.repeat(300)}"`],
  ])('finds no name in %s', (header) => {
    expect(fileNameFromDisposition(header)).toBeNull();
  });

  it('names a file by the URL first, then Content-Disposition, then "file"', () => {
    const disposition = 'attachment; filename="from-header.pdf"';
    expect(fileNameAfterFetch(media('from-url.pdf'), disposition)).toBe('from-url.pdf');
    expect(fileNameAfterFetch(media(null), disposition)).toBe('from-header.pdf');
    expect(fileNameAfterFetch(media(null), 'attachment')).toBe('file');
    expect(fileNameAfterFetch(media(null), null)).toBe('file');
  });

  it('takes the URL’s last path segment when it is a valid name', () => {
    expect(fileNameFromUrl('https://x.test/docs/report%20Q3.pdf?x=1')).toBe('report Q3.pdf');
    expect(fileNameFromUrl('https://x.test/docs/')).toBeNull();
    expect(fileNameFromUrl('https://x.test/a/%E0%A4%A')).toBeNull();
  });
});
