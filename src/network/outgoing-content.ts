/**
 * What the gateway asks a network to send (the network seam's outgoing half): the content of each message type,
 * link previews, template buttons, presence states, and the message a reply quotes.
 *
 * Owns: these shapes only; network.ts re-exports them so callers keep one import.
 * Must never: hold behaviour, or name anything of a particular network (WhatsApp's or the sandbox's own types).
 */
import type { MediaSource } from './media-source.js';
import type { NetworkGroupId, PhoneNumber } from './values.js';
export type NetworkMessageContent =
  /** `preview`: what the first link of the text shows, when the gateway could make one (no preview otherwise). */
  | { readonly type: 'chat'; readonly text: string; readonly preview?: LinkPreview }
  /** A sticker: WebP bytes. */
  | { readonly type: 'sticker'; readonly media: MediaSource; readonly mimetype: string }
  /** Contact cards, one per person (a network writes them in its own form: WhatsApp as vCards). */
  | { readonly type: 'contact'; readonly contacts: ReadonlyArray<SharedContact> }
  /** A poll: its question, 2 to 12 distinct answers, and how many of them one voter may pick. */
  | {
      readonly type: 'poll';
      readonly name: string;
      readonly options: ReadonlyArray<string>;
      readonly selectableCount: number;
    }
  | {
      readonly type: 'image';
      readonly media: MediaSource;
      readonly mimetype: string;
      readonly caption?: string;
      readonly viewOnce?: boolean;
    }
  | {
      readonly type: 'video';
      readonly media: MediaSource;
      readonly mimetype: string;
      readonly caption?: string;
      readonly viewOnce?: boolean;
    }
  /** `ptt`: a voice note (played inline) rather than an audio file. */
  | { readonly type: 'audio'; readonly media: MediaSource; readonly mimetype: string; readonly ptt?: boolean }
  | {
      readonly type: 'file';
      readonly media: MediaSource;
      readonly mimetype: string;
      readonly fileName: string;
      readonly caption?: string;
    }
  | {
      readonly type: 'location';
      readonly latitude: number;
      readonly longitude: number;
      readonly name?: string;
      readonly address?: string;
    }
  | {
      readonly type: 'list';
      readonly title: string;
      readonly text: string;
      readonly footer?: string;
      readonly buttonText: string;
      readonly sections: ReadonlyArray<{
        readonly title: string;
        readonly rows: ReadonlyArray<{ readonly title: string; readonly rowId: string; readonly description?: string }>;
      }>;
    }
  | {
      readonly type: 'template';
      readonly text: string;
      readonly footer?: string;
      readonly buttons: ReadonlyArray<TemplateButton>;
    }
  /**
   * A reaction (reply by response, docs/internals.md, Whatspie compatibility): `emoji` shown on `target`, a message of the chat it
   * is sent to. Sent on its own: never with mentions or a quoted message.
   */
  | { readonly type: 'reaction'; readonly emoji: string; readonly target: QuotedMessage }
  /**
   * Message actions (docs/internals.md, Message actions), each sent to the chat of its target, on its own: `edit`
   * replaces the text (or caption) of a message this device sent; `delete` deletes one it sent for everyone; `read`
   * marks messages it received read (read receipts; `targets` are of one chat, oldest first).
   */
  | { readonly type: 'edit'; readonly text: string; readonly target: QuotedMessage }
  | { readonly type: 'delete'; readonly target: QuotedMessage }
  | { readonly type: 'read'; readonly targets: ReadonlyArray<QuotedMessage> };

/** A person's card in a contact message. `phone`: country code first, maybe with a leading `+`. */
export interface SharedContact {
  readonly name: string;
  readonly phone: string;
  readonly organization?: string;
}

/** The preview of a link in a chat text, made by the gateway when the message is sent. */
export interface LinkPreview {
  /** The link as the text has it. */
  readonly url: string;
  readonly title: string;
  readonly description?: string;
  /** The page's image, at most 1 MB: base64, so the preview travels as plain JSON (the sandbox's wire). */
  readonly thumbnail?: { readonly mimetype: string; readonly base64: string };
}

export type TemplateButton =
  | { readonly index: number; readonly urlButton: { readonly displayText: string; readonly url: string } }
  | { readonly index: number; readonly callButton: { readonly displayText: string; readonly phoneNumber: string } }
  | { readonly index: number; readonly quickReplyButton: { readonly displayText: string; readonly id: string } };

/** What `sendPresence` tells: the device's presence, or (with a chat) its chat state there. */
export type PresenceState = 'available' | 'unavailable' | 'composing' | 'recording' | 'paused';

export interface OutgoingNetworkMessage {
  /** Caller-chosen id. Sending the same id twice must not show the message twice to the recipient. */
  readonly id: string;
  /** A phone number, or a group id for group sends. */
  readonly to: PhoneNumber | NetworkGroupId;
  readonly content: NetworkMessageContent;
  /** People mentioned in the message's text or caption (docs/internals.md, Whatspie compatibility); only with content that has one. */
  readonly mentions?: ReadonlyArray<PhoneNumber>;
  /** The message this one answers: it is shown as a reply to it (docs/internals.md, Whatspie compatibility). */
  readonly quoted?: QuotedMessage;
  /** The message is a copy of another (`POST /messages/{id}/forward`): the recipient sees it marked forwarded. */
  readonly forwarded?: boolean;
}

/** A message an outgoing one replies to, as the gateway knows it. */
export interface QuotedMessage {
  /**
   * A message this device sent: the caller-chosen id it was sent with. A message it received: the
   * network's id, as `incoming_message` reported it.
   */
  readonly id: string;
  /** True when this device sent the quoted message. */
  readonly fromMe: boolean;
  /** The chat it is in: a phone number, or a group id. */
  readonly chat: PhoneNumber | NetworkGroupId;
  /** Who wrote it, when someone else did. */
  readonly author?: PhoneNumber;
  /** Its text or caption, when it had one: what the reply shows of it. */
  readonly text?: string;
}
