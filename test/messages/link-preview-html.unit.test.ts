// The bounded reading of a previewed page (src/messages/link-preview-html.ts) and the link a chat's preview is for.
import { describe, expect, it } from 'vitest';
import { DESCRIPTION_MAX, TITLE_MAX, firstLink, summarisePage } from '../../src/messages/link-preview-html.js';

describe('a page summary', () => {
  it('takes og: tags before twitter: tags, <title> and the description meta, decoding entities', () => {
    const html = `<html><head><title>Page &amp; title</title>
      <META name="twitter:title" content="Twitter title"><meta content='Big &quot;sale&quot; &#8211; now' property='og:title'>
      <meta name="description" content="Plain   description">
      <meta property=og:image content=/a.jpg></head><body><meta property="og:description" content="in the body"></body>`;
    expect(summarisePage(html)).toEqual({
      title: 'Big "sale" – now',
      description: 'Plain description',
      image: '/a.jpg',
    });
  });

  it('falls back to the title; a page with none has no summary; the body is not read', () => {
    expect(summarisePage('<title>\n  Only   this </title>')).toEqual({ title: 'Only this' });
    expect(summarisePage('<p>nothing</p>')).toEqual({});
    expect(summarisePage('<head></head><body><title>late</title></body>')).toEqual({});
  });

  it('cuts a long title and description, and reads an unclosed tag to its limit only', () => {
    const long = summarisePage(`<meta property="og:title" content="${'t'.repeat(5000)}">
      <meta name="description" content="${'d'.repeat(5000)}">`);
    expect(long.title).toHaveLength(TITLE_MAX);
    expect(long.description).toHaveLength(DESCRIPTION_MAX);
    expect(summarisePage(`<meta property="og:title" content="x${'y'.repeat(1_000_000)}`)).toEqual({});
  });

  it('reads a megabyte of tags in linear time', () => {
    const html = `<head>${'<meta name="a" content="b">'.repeat(40_000)}<meta property="og:title" content="End"></head>`;
    const started = performance.now();
    expect(summarisePage(html).title).toBe('End');
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});

describe('the first link of a text', () => {
  it.each([
    ['see https://shop.example/a?b=1, then', 'https://shop.example/a?b=1'],
    ['(https://example.com/x)', 'https://example.com/x'],
    ['https://en.wikipedia.org/wiki/Bread_(food).', 'https://en.wikipedia.org/wiki/Bread_(food)'],
    ['two: http://a.example and https://b.example', 'http://a.example'],
    ['none here: example.com', null],
  ])('%j → %j', (text, link) => {
    expect(firstLink(text, 2048)).toBe(link);
  });

  it('a link longer than URLs may be is none', () => {
    expect(firstLink(`https://example.com/${'a'.repeat(3000)}`, 2048)).toBeNull();
  });
});
