// The WhatsApp side of contacts and the own profile (src/network/whatsapp/contacts.ts) against a socket that answers
// as the library does: the address book from `contacts.upsert` (LID forms resolved by their number), `contact_changed`
// from `contacts.update`, a contact's profile (number check, about, picture withheld by privacy, blocked), blocking,
// the blocklist with LID entries, the own profile and pictures.
import { describe, expect, it } from 'vitest';
import type { NetworkEvent } from '../../../src/network/network.js';
import { NetworkForbiddenError, NetworkNotFoundError } from '../../../src/network/network.js';
import { ConnectionContacts } from '../../../src/network/whatsapp/contacts.js';
import type { SocketPort } from '../../../src/network/whatsapp/socket-port.js';
import { queryError } from './fake-socket.js';

const ME = '4915100000001';
const ANA = '4917600000002';
const BUDI = '4917600000003';

function contacts(answers: Record<string, unknown>) {
  const calls: unknown[][] = [];
  const events: NetworkEvent[] = [];
  const port = new Proxy(answers, {
    get(target, name: string) {
      const fn = target[name];
      if (typeof fn !== 'function') return fn;
      return (...args: unknown[]) => {
        calls.push([name, ...args]);
        return (fn as (...a: unknown[]) => unknown)(...args);
      };
    },
  }) as unknown as SocketPort;
  const part = new ConnectionContacts(
    () => port,
    (event) => events.push(event),
  );
  return { part, calls, events };
}

describe('WhatsApp contacts', () => {
  it('keeps the address book the network hands over, by number (LID forms by their number, LIDs alone left out)', async () => {
    const { part, events } = contacts({});
    part.handlers['contacts.upsert']([
      { id: `${ANA}@s.whatsapp.net`, name: 'Ana', notify: 'Ana P' },
      { id: '1234567@lid', phoneNumber: `${BUDI}@s.whatsapp.net`, notify: 'Budi', verifiedName: 'Budi Shop' },
      { id: '7654321@lid', notify: 'Nobody known' },
    ]);
    expect(await part.listContacts()).toEqual([
      { phone: ANA, name: 'Ana', notifyName: 'Ana P', isBusiness: false },
      { phone: BUDI, name: null, notifyName: 'Budi', isBusiness: true },
    ]);
    expect(events).toEqual([]);
  });

  it('tells a known contact’s new name or picture as contact_changed, not what only repeats the book', () => {
    const { part, events } = contacts({});
    part.handlers['contacts.upsert']([{ id: `${ANA}@s.whatsapp.net`, notify: 'Ana' }]);
    part.handlers['contacts.update']([{ id: `${ANA}@s.whatsapp.net`, notify: 'Ana' }]);
    part.handlers['contacts.update']([{ id: `${ANA}@s.whatsapp.net`, notify: 'Ana Putri' }]);
    part.handlers['contacts.update']([{ id: `${ANA}@s.whatsapp.net`, imgUrl: 'changed' }]);
    part.handlers['contacts.update']([{ id: '999@lid', imgUrl: 'changed' }]);
    expect(events).toEqual([
      { type: 'contact_changed', phone: ANA, name: 'Ana Putri' },
      { type: 'contact_changed', phone: ANA, picture: true },
    ]);
  });

  it('reads a contact: registered, about, a picture withheld as null, and blocked from the blocklist', async () => {
    const { part, calls } = contacts({
      onWhatsApp: async (jid: string) => [{ jid, exists: true }],
      fetchStatus: async (jid: string) => [{ id: jid, status: { status: 'At work', setAt: new Date(0) } }],
      profilePictureUrl: async () => {
        throw queryError(401, 'not-authorized');
      },
      fetchBlocklist: async () => [`${ANA}@s.whatsapp.net`],
    });
    part.handlers['contacts.upsert']([{ id: `${ANA}@s.whatsapp.net`, name: 'Ana' }]);
    expect(await part.getContact(ANA)).toEqual({
      phone: ANA,
      name: 'Ana',
      about: 'At work',
      pictureUrl: null,
      registered: true,
      blocked: true,
    });
    expect(calls).toContainEqual(['profilePictureUrl', `${ANA}@s.whatsapp.net`, 'image']);
  });

  it('asks nothing more about an unregistered number', async () => {
    const { part, calls } = contacts({
      onWhatsApp: async () => [],
      fetchBlocklist: async () => [],
    });
    expect(await part.getContact(BUDI)).toMatchObject({ registered: false, about: null, pictureUrl: null });
    expect(calls.map((c) => c[0])).not.toContain('fetchStatus');
  });

  it('blocks and unblocks by JID; the blocklist names LID entries by their number, once, sorted', async () => {
    const { part, calls } = contacts({
      updateBlockStatus: async () => undefined,
      fetchBlocklist: async () => [`${BUDI}@s.whatsapp.net`, '1234567@lid', `${ANA}@s.whatsapp.net`, '555@lid'],
      signalRepository: {
        lidMapping: { getPNForLID: async (lid: string) => (lid === '1234567@lid' ? `${ANA}@s.whatsapp.net` : null) },
      },
    });
    await part.setBlocked(ANA, true);
    await part.setBlocked(ANA, false);
    expect(calls.slice(0, 2)).toEqual([
      ['updateBlockStatus', `${ANA}@s.whatsapp.net`, 'block'],
      ['updateBlockStatus', `${ANA}@s.whatsapp.net`, 'unblock'],
    ]);
    expect(await part.listBlocked()).toEqual([ANA, BUDI]);
  });

  it('reads and changes the own profile: picture, then name, then about, as the library takes them', async () => {
    const statuses = new Map<string, string>();
    const { part, calls } = contacts({
      user: { id: `${ME}:12@s.whatsapp.net`, name: 'Acme' },
      fetchStatus: async (jid: string) => [
        { id: jid, status: { status: statuses.get(jid) ?? '', setAt: new Date(0) } },
      ],
      profilePictureUrl: async () => undefined,
      updateProfilePicture: async () => undefined,
      updateProfileName: async () => undefined,
      updateProfileStatus: async (status: string) => void statuses.set(`${ME}@s.whatsapp.net`, status),
    });
    expect(await part.getProfile()).toEqual({ name: 'Acme', about: null, pictureUrl: null });
    const bytes = Buffer.from('ffd8ffe0', 'hex');
    const after = await part.updateProfile({
      name: 'Acme Support',
      about: 'We answer',
      picture: { mimetype: 'image/jpeg', base64: bytes.toString('base64') },
    });
    expect(after.about).toBe('We answer');
    const changes = calls.filter((c) => String(c[0]).startsWith('update'));
    expect(changes).toEqual([
      ['updateProfilePicture', `${ME}@s.whatsapp.net`, bytes],
      ['updateProfileName', 'Acme Support'],
      ['updateProfileStatus', 'We answer'],
    ]);
  });

  it('sets a group’s picture; the network’s refusals become the seam’s errors', async () => {
    let failure: Error | null = null;
    const { part, calls } = contacts({
      updateProfilePicture: async () => {
        if (failure !== null) throw failure;
      },
    });
    const picture = { mimetype: 'image/png' as const, base64: Buffer.from('89504e47', 'hex').toString('base64') };
    await part.setGroupPicture('120363000000000001@g.us', picture);
    expect(calls[0]?.[1]).toBe('120363000000000001@g.us');
    failure = queryError(403, 'forbidden');
    await expect(part.setGroupPicture('120363000000000001@g.us', picture)).rejects.toBeInstanceOf(
      NetworkForbiddenError,
    );
    failure = queryError(404, 'item-not-found');
    await expect(part.setGroupPicture('120363000000000001@g.us', picture)).rejects.toBeInstanceOf(NetworkNotFoundError);
  });

  it('passes a group’s picture notification (a contact update of the group) to the groups part, as no contact change', () => {
    const pictures: string[] = [];
    const events: NetworkEvent[] = [];
    const part = new ConnectionContacts(
      () => ({}) as SocketPort,
      (event) => events.push(event),
      (jid) => pictures.push(jid),
    );
    part.handlers['contacts.update']([{ id: '120363000000000001@g.us', imgUrl: 'changed' }]);
    part.handlers['contacts.update']([{ id: '120363000000000001@g.us', imgUrl: 'removed' }]);
    part.handlers['contacts.update']([{ id: '120363000000000002@g.us', notify: 'not a picture' }]);
    expect(pictures).toEqual(['120363000000000001@g.us', '120363000000000001@g.us']);
    expect(events).toEqual([]);
  });
});
