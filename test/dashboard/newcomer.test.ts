// The dashboard as a new user tries it (issue 22): on a phone-sized screen
// nothing is wider than the screen; groups are created from the dashboard;
// phone numbers are taken as people write them; messages filter by read or
// unread; focus is visible and lands on the first field of a form that opens
// and back on its opener when it closes. Controls are found by role and name.
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import type { TestGateway } from '../helpers/gateway.js';
import { createPairedDevice } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';
import { dashboardSuite } from './harness.js';

const DEVICE_PHONE = '6281377100101';
const CUSTOMER = '6281377100202';
const WAIT = { timeout: 15_000 };
/** A text with no place to break, and a long link: what pushes a table wider than a phone. */
const LONG_WORD = 'Unbreakable'.repeat(30);
const LONG_URL = `https://example.com/${'a-very-long-path-segment/'.repeat(12)}end`;

/** What the page's element with focus is, by its accessible name (string: evaluated in the page). */
const FOCUSED = `(() => {
  const el = document.activeElement;
  if (el === null || el === document.body) return 'body';
  const label = el.labels?.[0]?.textContent ?? el.getAttribute('aria-label') ?? el.textContent ?? '';
  return el.tagName.toLowerCase() + ':' + label.trim();
})()`;

const SIDEWAYS_IN_TABLE = `(() => {
  const el = document.querySelector('[aria-label="Messages table"]');
  return el.scrollWidth - el.clientWidth;
})()`;
const OVERFLOW = `(() => ({ scroll: document.scrollingElement.scrollWidth, inner: innerWidth }))()`;

describe('the dashboard as a new user tries it', () => {
  let gw: TestGateway;
  let deviceId: number;
  const { pages } = dashboardSuite(async (started) => {
    gw = started;
    deviceId = (await createPairedDevice(gw, DEVICE_PHONE, { name: 'Shop phone' })).id;
  });

  /** A new page for the test, signed in, at `hash` (the devices list by default). */
  const page = (name: string, hash = '', width?: number, height?: number): Promise<Page> =>
    pages.openSignedIn(name, hash, width, height);

  const send = async (text: string, receiver = CUSTOMER) => {
    const answer = await gw.request('POST', '/messages', {
      device: DEVICE_PHONE,
      receiver,
      type: 'chat',
      params: { text },
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    return answer.body.data.id as string;
  };

  it('is no wider than a 375 px screen, with long message texts, on every page of a device', async () => {
    await send(LONG_WORD);
    await send(`see ${LONG_URL}`);
    const incoming = await gw.request('POST', `/sandbox/phones/${CUSTOMER}/messages`, {
      to: DEVICE_PHONE,
      text: LONG_WORD,
    });
    expect(incoming.status, JSON.stringify(incoming.body)).toBe(200);
    const p = await page('375 px no overflow', `#/devices/${deviceId}/messages`, 375, 812);
    const table = p.getByRole('region', { name: 'Messages table' });
    await table.getByText(`see ${LONG_URL}`, { exact: true }).waitFor(WAIT);
    expect(await p.evaluate<{ scroll: number; inner: number }>(OVERFLOW)).toEqual({ scroll: 375, inner: 375 });
    // Nor wider than its card (no sideways scrolling inside it), and each text has the room to be read:
    // at least half the screen, not a column squeezed between seven others.
    expect(await p.evaluate<number>(SIDEWAYS_IN_TABLE)).toBe(0);
    for (const text of [LONG_WORD, `see ${LONG_URL}`]) {
      const box = await table.getByText(text, { exact: true }).first().boundingBox();
      expect(box?.width ?? 0, text).toBeGreaterThanOrEqual(375 / 2);
    }
    // Still a table to assistive technology: rows with their cells (eight columns, the last the message's actions).
    expect(
      await table
        .getByRole('row')
        .filter({ hasText: `see ${LONG_URL}` })
        .getByRole('cell')
        .count(),
    ).toBe(8);
    for (const [hash, ready] of [
      ['#/devices', () => p.getByRole('rowheader', { name: 'Shop phone' }).waitFor()],
      [`#/devices/${deviceId}`, () => p.getByRole('button', { name: 'Restart connection' }).waitFor()],
      [`#/devices/${deviceId}/webhooks`, () => p.getByRole('heading', { name: 'Delivery log' }).waitFor()],
      [`#/devices/${deviceId}/groups`, () => p.getByRole('heading', { name: 'Groups', exact: true }).waitFor()],
      [`#/devices/${deviceId}/chats`, () => p.getByRole('region', { name: 'Chats table' }).waitFor()],
      ['#/tokens', () => p.getByRole('table').waitFor()],
    ] as const) {
      await p.goto(`/dashboard/${hash}`);
      await ready();
      expect(await p.evaluate<{ scroll: number; inner: number }>(OVERFLOW), hash).toEqual({ scroll: 375, inner: 375 });
    }
  });

  it('filters messages by read and unread', async () => {
    const read = await send('read by the customer');
    await send('not read yet');
    await waitFor(
      async () => (await gw.request('GET', `/messages/${read}`)).body.data.status,
      (status) => status === 'delivered',
      { what: 'delivered', timeoutMs: 15_000 },
    );
    expect((await gw.request('POST', `/sandbox/phones/${CUSTOMER}/read`, { message_id: read })).status).toBe(200);
    await waitFor(
      async () => (await gw.request('GET', `/messages/${read}`)).body.data.read_at,
      (at) => at !== null,
      { what: 'read_at', timeoutMs: 15_000 },
    );
    const p = await page('messages read filter', `#/devices/${deviceId}/messages`);
    const table = p.getByRole('region', { name: 'Messages table' });
    await table.getByText('not read yet', { exact: true }).waitFor(WAIT);

    await p.getByLabel('Read', { exact: true }).selectOption('read');
    await table.getByText('read by the customer', { exact: true }).waitFor(WAIT);
    expect(await table.getByText('not read yet', { exact: true }).count()).toBe(0);

    await p.getByLabel('Read', { exact: true }).selectOption('unread');
    await table.getByText('not read yet', { exact: true }).waitFor(WAIT);
    expect(await table.getByText('read by the customer', { exact: true }).count()).toBe(0);

    // With the others: unread and incoming.
    await p.getByLabel('Direction', { exact: true }).selectOption('incoming');
    await table.getByText(LONG_WORD, { exact: true }).waitFor(WAIT);
    expect(await table.getByText('not read yet', { exact: true }).count()).toBe(0);
  });

  it('takes phone numbers as people write them, in every phone field, as the API does', async () => {
    // Sending: spaces, dashes and a leading +.
    const p = await page('phone numbers as typed', `#/devices/${deviceId}/messages`);
    await p.getByLabel('Receiver').fill('+62 813-7710-0202');
    await p.getByLabel('Text', { exact: true }).fill('typed with spaces');
    await p.getByRole('button', { name: 'Send message', exact: true }).click();
    await p.getByRole('status').filter({ hasText: 'Accepted as' }).waitFor(WAIT);
    const sent = (await gw.request('GET', `/messages?device=${DEVICE_PHONE}&limit=1`)).body.data[0];
    expect(sent).toMatchObject({ receiver: CUSTOMER, message: 'typed with spaces' });
    // A leading 0 (a number without its country code) is refused as the API refuses it, with its words.
    await p.getByLabel('Receiver').fill('0813 7710 0202');
    await p.getByRole('button', { name: 'Send message', exact: true }).click();
    await p.getByRole('alert').filter({ hasText: 'Invalid phone number format' }).waitFor(WAIT);
    expect(await p.locator('.field-error').first().textContent()).toContain('no leading 0');

    // A device for a number.
    await p.goto('/dashboard/#/devices');
    await p.getByRole('button', { name: 'Add device', exact: true }).click();
    await p.getByLabel('Name', { exact: true }).fill('Counter');
    await p.getByLabel('Phone (optional)').fill('+62 (813) 7710-0404');
    await p.getByRole('button', { name: 'Create', exact: true }).click();
    await p.getByRole('status').filter({ hasText: 'Device “Counter” created' }).waitFor(WAIT);
    const counter = ((await gw.request('GET', '/devices')).body.data as Array<{ id: number; name: string }>).find(
      (d) => d.name === 'Counter',
    );
    expect(counter).toBeDefined();

    // Pairing it by code: the code is for the number as the API writes it (the device takes only that number).
    await p.goto(`/dashboard/#/devices/${counter!.id}/pair`);
    const form = p.getByRole('form', { name: 'Pair with a code' });
    await form.getByLabel('Phone number for the code').fill('+62 813 7710 0404');
    await form.getByRole('button', { name: 'Get pairing code', exact: true }).click();
    await form.getByRole('status').filter({ hasText: 'Pairing code for 6281377100404' }).waitFor(WAIT);

    // Pairing by the virtual phone's scan.
    const other = (await gw.request('POST', '/devices', { package: 'BETA', name: 'Till' })).body.data.id;
    await p.goto(`/dashboard/#/devices/${other}/pair`);
    await p.getByRole('img', { name: /QR code/ }).waitFor(WAIT);
    await p.getByLabel('Virtual phone number').fill('+62 813-7710-0505');
    await p.getByRole('button', { name: 'Scan with virtual phone', exact: true }).click();
    await p.getByText('Connected', { exact: true }).waitFor(WAIT);
    expect((await gw.request('GET', `/devices/${other}`)).body.data.phone).toBe('6281377100505');

    // A virtual phone's inbox.
    await p.goto('/dashboard/#/phones');
    await p.getByLabel('Phone number').fill('+62 813-7710-0202');
    await p.getByRole('button', { name: 'Open inbox', exact: true }).click();
    await p.getByRole('heading', { name: `Inbox of ${CUSTOMER}` }).waitFor(WAIT);
  });

  it('creates a group with its members, as typed, and lists it with them', async () => {
    const p = await page('create group', `#/devices/${deviceId}/groups`);
    await p.getByRole('button', { name: 'New group', exact: true }).click();
    await p.getByLabel('Group name').fill('Night shift');
    // One number per line or comma; spaces and dashes inside a number; 0000 is not on the network.
    await p.getByLabel('Members').fill('+62 813-7710-0606, 6281377100707\n+62 813 7710 0000');
    await p.getByRole('button', { name: 'Create group', exact: true }).click();
    await p.getByRole('status').filter({ hasText: 'Group created' }).waitFor(WAIT);
    const created = p.getByRole('status').filter({ hasText: 'Group created' });
    expect(await created.textContent()).toContain('6281377100000');
    // Listed, and its page shows the members.
    await p.getByRole('rowheader', { name: 'Night shift' }).getByRole('link').click();
    const participants = p.getByRole('region', { name: 'Participants table' });
    for (const phone of [DEVICE_PHONE, '6281377100606', '6281377100707']) {
      await participants.getByRole('rowheader', { name: phone }).waitFor(WAIT);
    }
    expect(await participants.getByRole('row').filter({ hasText: DEVICE_PHONE }).textContent()).toContain('superadmin');
    expect(await participants.getByRole('rowheader', { name: '6281377100000' }).count()).toBe(0);

    // Members added as typed too.
    await p.getByLabel('Phone numbers to add').fill('+62 813-7710-0808');
    await p.getByRole('button', { name: 'Add members', exact: true }).click();
    await participants.getByRole('rowheader', { name: '6281377100808' }).waitFor(WAIT);

    // The API's refusal is shown in its words.
    await p.getByRole('link', { name: /All groups of/ }).click();
    await p.getByRole('button', { name: 'New group', exact: true }).click();
    await p.getByLabel('Group name').fill('   ');
    await p.getByRole('button', { name: 'Create group', exact: true }).click();
    await p.getByRole('alert').filter({ hasText: 'Validation failed' }).waitFor(WAIT);
  });

  it('shows where focus is, and puts it on a form’s first field when it opens and back on its opener when it closes', async () => {
    const p = await page('focus by keyboard');
    const focused = () => p.evaluate<string>(FOCUSED);
    const ringShown = () =>
      p.evaluate<boolean>(`(() => {
        const el = document.activeElement;
        const style = getComputedStyle(el);
        return el.matches(':focus-visible') && style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2;
      })()`);

    // Add device: Enter opens it on its first field; Escape closes it and focus returns.
    await p.getByRole('button', { name: 'Add device', exact: true }).focus();
    await p.keyboard.press('Enter');
    await p.getByRole('form', { name: 'Add device' }).waitFor(WAIT);
    await expect.poll(focused).toBe('input:Name');
    await expect.poll(ringShown).toBe(true);
    await p.keyboard.press('Escape');
    expect(await p.getByRole('form', { name: 'Add device' }).count()).toBe(0);
    await expect.poll(focused).toBe('button:Add device');
    await expect.poll(ringShown).toBe(true);
    // Its Cancel button, by keyboard: the same.
    await p.keyboard.press('Enter');
    await p.getByLabel('Name', { exact: true }).waitFor(WAIT);
    await p.getByRole('button', { name: 'Cancel', exact: true }).focus();
    await p.keyboard.press('Enter');
    await expect.poll(focused).toBe('button:Add device');

    // A question before deleting: focus on the answer, and back on the opener when cancelled.
    const spare = (await gw.request('POST', '/devices', { package: 'BETA', name: 'Spare' })).body.data.id;
    await p.goto(`/dashboard/#/devices/${spare}`);
    await p.getByRole('button', { name: 'Delete device', exact: true }).focus();
    await p.keyboard.press('Enter');
    await expect.poll(focused).toBe('button:Yes, delete');
    await p.keyboard.press('Tab');
    await expect.poll(focused).toBe('button:Cancel');
    await expect.poll(ringShown).toBe(true);
    await p.keyboard.press('Enter');
    await expect.poll(focused).toBe('button:Delete device');
    await p.keyboard.press('Enter');
    await p.keyboard.press('Escape');
    await expect.poll(focused).toBe('button:Delete device');
    expect((await gw.request('GET', `/devices/${spare}`)).status).toBe(200);

    // New group: the same.
    await p.goto(`/dashboard/#/devices/${deviceId}/groups`);
    await p.getByRole('button', { name: 'New group', exact: true }).focus();
    await p.keyboard.press('Enter');
    await expect.poll(focused).toBe('input:Group name');
    await p.keyboard.press('Escape');
    await expect.poll(focused).toBe('button:New group');
  });
});
