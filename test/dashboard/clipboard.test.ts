// The clipboard the dashboard's files share, and the lock that keeps one file's copy from reading another's
// (`copiedText` in harness.ts). The project's files join one Chromium, and its clipboard belongs to the browser, not
// to a context: this file checks that premise, then races two copies held open for a while, which read each other's
// text without the lock.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectBrowser, copiedText, openPage, type TestPage } from './harness.js';

describe('the shared browser’s clipboard', () => {
  let server: Server;
  let base = '';
  let browser: Browser;
  const opened: TestPage[] = [];

  beforeAll(async () => {
    // A page of its own on 127.0.0.1 (a secure context, where the clipboard API is offered); no gateway needed.
    server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!doctype html><html lang="en"><title>clipboard</title><p>clipboard</p></html>');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    browser = await connectBrowser();
  });
  afterAll(async () => {
    for (const { context } of opened) await context.close();
    await browser?.close();
    await new Promise((resolve) => server?.close(resolve));
  });

  const page = async () => {
    const opening = await openPage(browser, base);
    opened.push(opening);
    await opening.page.goto('/');
    return opening.page;
  };
  const write = (p: Awaited<ReturnType<typeof page>>, text: string) =>
    p.evaluate(`navigator.clipboard.writeText(${JSON.stringify(text)})`);
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it('is one clipboard for every context of the browser', async () => {
    const [a, b] = [await page(), await page()];
    await write(a, 'written in one context');
    expect(await b.evaluate('navigator.clipboard.readText()')).toBe('written in one context');
  });

  it('copiedText gives each of two copies at once its own text: the second waits for the first to be read', async () => {
    const [a, b] = [await page(), await page()];
    const copies = await Promise.all([
      copiedText(a, async () => {
        await write(a, 'copied by a');
        await pause(300);
      }),
      copiedText(b, async () => {
        await write(b, 'copied by b');
        await pause(300);
      }),
    ]);
    expect(copies).toEqual(['copied by a', 'copied by b']);
  });
});
