/**
 * The seam's words for a device's contacts and its own profile (DECISIONS 16): the address book, one contact's
 * profile, blocking, the device's name, about text and picture, and a group's picture.
 *
 * Owns: the shapes a network answers with and the events it reports about contacts.
 * Must never: import anything but types, or hold behaviour.
 */
import type { NetworkGroupId, PhoneNumber } from './values.js';

/** One number the device's address book (or the network's contact list for it) holds. */
export interface AddressBookEntry {
  readonly phone: PhoneNumber;
  /** The name the device's user saved for the number. */
  readonly name: string | null;
  /** The name the number's owner gave themselves (WhatsApp's push name). */
  readonly notifyName: string | null;
  readonly isBusiness: boolean;
}

/** One number as the network shows it to the device. */
export interface ContactProfile {
  readonly phone: PhoneNumber;
  readonly name: string | null;
  /** The number's about (status) text, when its owner lets the device see it. */
  readonly about: string | null;
  /** Where the number's profile picture can be read, when its owner lets the device see it. */
  readonly pictureUrl: string | null;
  readonly registered: boolean;
  /** The device blocked the number. */
  readonly blocked: boolean;
}

/** The device's own profile. */
export interface OwnProfile {
  readonly name: string | null;
  readonly about: string | null;
  readonly pictureUrl: string | null;
}

/** A picture to set: JPEG or PNG bytes, in base64 so it travels as plain JSON (the sandbox's wire). */
export interface PictureUpload {
  readonly mimetype: 'image/jpeg' | 'image/png';
  readonly base64: string;
}

/** What `updateProfile` changes; each absent field stays as it is. */
export interface ProfileChanges {
  readonly name?: string;
  readonly about?: string;
  readonly picture?: PictureUpload;
}

/**
 * The contact and profile operations of a connection (part of NetworkConnection). Each may reject with
 * NetworkUnavailableError while not connected.
 */
export interface ContactOperations {
  /** The device's address book as the network holds it. */
  listContacts(): Promise<AddressBookEntry[]>;
  /** One number's profile, as the network shows it to the device now. */
  getContact(phone: PhoneNumber): Promise<ContactProfile>;
  /** Blocks (`true`) or unblocks the number; doing what is already so is no error. */
  setBlocked(phone: PhoneNumber, blocked: boolean): Promise<void>;
  /** The numbers the device blocked. */
  listBlocked(): Promise<PhoneNumber[]>;
  getProfile(): Promise<OwnProfile>;
  /** Applies the changes and answers the profile as it now is. */
  updateProfile(changes: ProfileChanges): Promise<OwnProfile>;
  /** Sets the group's picture (NetworkForbiddenError: the device may not; NetworkNotFoundError: not in the group). */
  setGroupPicture(groupId: NetworkGroupId, picture: PictureUpload): Promise<void>;
}

/** The operations by name: the sandbox's wire carries them as one call kind. */
export type ContactOperationName = keyof ContactOperations;

/**
 * The network's word that a contact changed their name or picture (`name`: the new one when it is what changed;
 * `picture`: the picture changed). Told to every device that can see the contact.
 */
export interface ContactChangedEvent {
  readonly type: 'contact_changed';
  readonly phone: PhoneNumber;
  readonly name?: string | null;
  readonly picture?: true;
}
