/**
 * Contacts and the device's own profile through the open socket (DECISIONS 16): the address book the network
 * handed over (`contacts.upsert`/`contacts.update`), one contact's profile (number check, about text, picture,
 * blocked), blocking, the own name, about text and picture, and a group's picture.
 *
 * Owns: turning the library's contact events into the address book this connection holds (bounded, in memory:
 * the network hands it over again at each connection) and into `contact_changed` (a name or picture that changed
 * after the book was first handed over); the LID forms of contacts resolved to numbers (numbers.ts).
 * Must never: report a contact by a LID whose number is unknown, or answer a profile field the network withheld
 * as anything but null.
 */
import { isJidGroup, type BaileysEventMap, type Contact } from 'baileys';
import type {
  AddressBookEntry,
  ContactOperations,
  ContactProfile,
  NetworkEvent,
  OwnProfile,
  PhoneNumber,
  PictureUpload,
} from '../network.js';
import { NetworkUnavailableError } from '../network.js';
import { groupError } from './groups.js';
import { phoneOf, senderPhone, userJid } from './numbers.js';
import type { SocketPort } from './socket-port.js';

/** Address book entries kept per connection: far above any phone's book, bounded so memory stays flat. */
export const ADDRESS_BOOK_LIMIT = 20_000;

/** The about text in a `fetchStatus` answer (`{status: {status, setAt}}` per user), or null when withheld. */
function aboutOf(list: ReadonlyArray<{ readonly [key: string]: unknown }> | undefined): string | null {
  const status = (list?.[0]?.status as { status?: unknown } | null | undefined)?.status;
  return typeof status === 'string' && status !== '' ? status : null;
}

function pictureBytes(picture: PictureUpload): Buffer {
  return Buffer.from(picture.base64, 'base64');
}

export class ConnectionContacts implements ContactOperations {
  private readonly book = new Map<PhoneNumber, AddressBookEntry>();

  constructor(
    private readonly open: () => SocketPort,
    private readonly emit: (event: NetworkEvent) => void,
    /** The network said a group's picture changed (its notification comes as a contact update of the group). */
    private readonly onGroupPicture: (jid: string) => void = () => undefined,
  ) {}

  /** The library's events this part listens to (socket-events.ts). */
  readonly handlers = {
    'contacts.upsert': (contacts: BaileysEventMap['contacts.upsert']) => {
      for (const contact of contacts) this.remember(contact);
    },
    'contacts.update': (updates: BaileysEventMap['contacts.update']) => this.onUpdate(updates),
  };

  /** A contact the network handed over: kept (a LID with no number is left out), merged with what was known. */
  private remember(contact: Partial<Contact>): AddressBookEntry | null {
    const phone = senderPhone(contact.id, contact.phoneNumber);
    if (phone === null) return null;
    const known = this.book.get(phone);
    const entry: AddressBookEntry = {
      phone,
      name: contact.name ?? known?.name ?? null,
      notifyName: contact.notify ?? contact.verifiedName ?? known?.notifyName ?? null,
      isBusiness: contact.verifiedName !== undefined ? true : (known?.isBusiness ?? false),
    };
    if (!known && this.book.size >= ADDRESS_BOOK_LIMIT) return entry;
    this.book.set(phone, entry);
    return entry;
  }

  private onUpdate(updates: BaileysEventMap['contacts.update']): void {
    for (const update of updates) {
      if (update.id !== undefined && isJidGroup(update.id)) {
        if (update.imgUrl !== undefined) this.onGroupPicture(update.id);
        continue;
      }
      const phone = senderPhone(update.id, update.phoneNumber);
      if (phone === null) continue;
      const before = this.book.get(phone);
      const entry = this.remember(update);
      const name = entry?.name ?? entry?.notifyName ?? null;
      const nameChanged =
        (update.name !== undefined || update.notify !== undefined) &&
        before !== undefined &&
        name !== (before.name ?? before.notifyName);
      // `imgUrl` is "changed" (or a new address, or null when taken away) when the picture changed.
      const pictureChanged = update.imgUrl !== undefined;
      if (!nameChanged && !pictureChanged) continue;
      this.emit({
        type: 'contact_changed',
        phone,
        ...(nameChanged ? { name } : {}),
        ...(pictureChanged ? { picture: true as const } : {}),
      });
    }
  }

  listContacts = async (): Promise<AddressBookEntry[]> => {
    this.open();
    return [...this.book.values()].sort((a, b) => a.phone.localeCompare(b.phone));
  };

  getContact = async (phone: PhoneNumber): Promise<ContactProfile> => {
    const socket = this.open();
    const jid = userJid(phone);
    const [found] = (await socket.onWhatsApp(jid)) ?? [];
    const registered = found?.exists === true;
    const known = this.book.get(phone);
    const [about, pictureUrl, blocked] = await Promise.all([
      registered ? socket.fetchStatus(jid).then(aboutOf, () => null) : null,
      registered ? this.pictureOf(socket, jid) : null,
      this.listBlocked().then((list) => list.includes(phone)),
    ]);
    return { phone, name: known?.name ?? known?.notifyName ?? null, about, pictureUrl, registered, blocked };
  };

  setBlocked = async (phone: PhoneNumber, blocked: boolean): Promise<void> => {
    await this.open().updateBlockStatus(userJid(phone), blocked ? 'block' : 'unblock');
  };

  listBlocked = async (): Promise<PhoneNumber[]> => {
    const socket = this.open();
    const jids = await socket.fetchBlocklist();
    const phones: PhoneNumber[] = [];
    for (const jid of jids) {
      const phone = phoneOf(jid) ?? (await this.numberOfLid(socket, jid));
      if (phone !== null) phones.push(phone);
    }
    return [...new Set(phones)].sort();
  };

  getProfile = async (): Promise<OwnProfile> => {
    const socket = this.open();
    const user = socket.user;
    if (user === undefined) throw new NetworkUnavailableError();
    const jid = userJid(phoneOf(user.id) ?? '');
    const [about, pictureUrl] = await Promise.all([
      socket.fetchStatus(jid).then(aboutOf, () => null),
      this.pictureOf(socket, jid),
    ]);
    return { name: user.name ?? user.notify ?? null, about, pictureUrl };
  };

  updateProfile: ContactOperations['updateProfile'] = async (changes) => {
    const socket = this.open();
    const own = socket.user?.id;
    if (own === undefined) throw new NetworkUnavailableError();
    if (changes.picture !== undefined) {
      await socket.updateProfilePicture(userJid(phoneOf(own) ?? ''), pictureBytes(changes.picture));
    }
    if (changes.name !== undefined) await socket.updateProfileName(changes.name);
    if (changes.about !== undefined) await socket.updateProfileStatus(changes.about);
    return this.getProfile();
  };

  setGroupPicture: ContactOperations['setGroupPicture'] = async (groupId, picture) => {
    try {
      await this.open().updateProfilePicture(groupId, pictureBytes(picture));
    } catch (error) {
      throw groupError(error);
    }
  };

  /** The picture's address; none set, or withheld by the owner's privacy (the network answers 401/404): null. */
  private async pictureOf(socket: SocketPort, jid: string): Promise<string | null> {
    try {
      return (await socket.profilePictureUrl(jid, 'image')) ?? null;
    } catch {
      return null;
    }
  }

  private async numberOfLid(socket: SocketPort, jid: string | undefined): Promise<PhoneNumber | null> {
    if (jid === undefined || !jid.endsWith('@lid')) return null;
    const pn = await socket.signalRepository.lidMapping.getPNForLID(jid).catch(() => null);
    return phoneOf(pn);
  }
}
