// Owns reading a link preview out of a web page's HTML (DECISIONS 15): the title, description and image URL
// its `<meta property="og:…">` (or `name="twitter:…"`, `name="description"`) tags and its `<title>` give. A
// bounded scan, not a parser: each tag is found with indexOf and read up to a fixed length, so the work is
// linear in the page (which the fetcher caps at 1 MB) and no tag can make it grow beyond that.
// It must never do I/O, evaluate anything a page holds, or look past the end of the page's head.

/** What a page says about itself; every field absent when the page does not say it. */
export interface PageSummary {
  readonly title?: string;
  readonly description?: string;
  /** The image URL as the page has it (maybe relative). */
  readonly image?: string;
}

/** Longest tag read; a longer one is cut there (a meta tag is a few hundred characters). */
const TAG_MAX = 8192;
/** Longest title and description kept, in characters (a preview shows a line or two). */
export const TITLE_MAX = 256;
export const DESCRIPTION_MAX = 1024;

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/** The text with the character references a page commonly uses turned into their characters. */
function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]{1,6}|#[0-9]{1,7}|[a-z]{2,6});/gi, (whole, name: string) => {
    if (name.startsWith('#')) {
      const code = name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return ENTITIES[name.toLowerCase()] ?? whole;
  });
}

/** Whitespace runs made one space, entities decoded, cut to `max` characters (never inside a surrogate pair). */
function clean(raw: string | undefined, max: number): string | undefined {
  if (raw === undefined) return undefined;
  const text = decodeEntities(raw).replace(/\s+/g, ' ').trim();
  if (text === '') return undefined;
  return [...text.slice(0, max * 2)].slice(0, max).join('');
}

/** The attributes of one tag's text (`<meta a="b" c='d' e=f>`), names lower-cased. */
function attributes(tag: string): Map<string, string> {
  const found = new Map<string, string>();
  const pattern = /([a-zA-Z_:][-a-zA-Z0-9_:.]*)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+))/g;
  for (const match of tag.matchAll(pattern)) {
    const name = match[1]!.toLowerCase();
    if (!found.has(name)) found.set(name, match[2] ?? match[3] ?? match[4] ?? '');
  }
  return found;
}

/** The page's summary; empty when it gives none. */
export function summarisePage(html: string): PageSummary {
  const lower = html.toLowerCase();
  // The head is where these tags belong; a page without one is read to its end (at most what was fetched).
  const headEnd = lower.indexOf('</head');
  const end = headEnd === -1 ? html.length : headEnd;
  const meta = new Map<string, string>();
  let at = lower.indexOf('<meta', 0);
  while (at !== -1 && at < end) {
    const close = lower.indexOf('>', at);
    const stop = close === -1 ? Math.min(end, at + TAG_MAX) : Math.min(close, at + TAG_MAX);
    const attrs = attributes(html.slice(at + 5, stop));
    const key = (attrs.get('property') ?? attrs.get('name'))?.toLowerCase();
    const content = attrs.get('content');
    if (key !== undefined && content !== undefined && !meta.has(key)) meta.set(key, content);
    if (close === -1) break;
    at = lower.indexOf('<meta', close);
  }
  let pageTitle: string | undefined;
  const titleAt = lower.indexOf('<title');
  if (titleAt !== -1 && titleAt < end) {
    const open = lower.indexOf('>', titleAt);
    const closing = open === -1 ? -1 : lower.indexOf('</title', open);
    if (closing !== -1) pageTitle = html.slice(open + 1, Math.min(closing, open + 1 + TAG_MAX));
  }
  const title = clean(meta.get('og:title') ?? meta.get('twitter:title') ?? pageTitle, TITLE_MAX);
  const description = clean(
    meta.get('og:description') ?? meta.get('twitter:description') ?? meta.get('description'),
    DESCRIPTION_MAX,
  );
  const image = clean(meta.get('og:image') ?? meta.get('og:image:url') ?? meta.get('twitter:image'), TAG_MAX);
  return {
    ...(title === undefined ? {} : { title }),
    ...(description === undefined ? {} : { description }),
    ...(image === undefined ? {} : { image }),
  };
}

/** The first http(s) link of a text, without the punctuation that ends a sentence after it; null when none. */
export function firstLink(text: string, maxLength: number): string | null {
  const match = /\bhttps?:\/\/[^\s<>"'`]+/i.exec(text);
  if (match === null) return null;
  let link = match[0];
  // A closing bracket ends the link only when the link did not open one.
  while (/[.,;:!?)\]}'"]$/.test(link)) {
    const last = link[link.length - 1]!;
    if (last === ')' && link.split('(').length > link.split(')').length - 1) break;
    link = link.slice(0, -1);
  }
  return link.length > maxLength ? null : link;
}
