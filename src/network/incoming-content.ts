/**
 * What a phone sent, as a network reports it to the gateway (part of the seam, network.ts): the content of an
 * incoming message by kind, and the message it replies to.
 *
 * Owns: those shapes, and nothing else. Must never: name a network's own structures (a network maps its messages
 * onto these kinds; a kind without a shape is `unsupported`, named by the network's own type).
 */
export interface IncomingContactCard {
  readonly name: string;
  readonly phones: ReadonlyArray<string>;
}

/**
 * The message an incoming one replies to. `networkId`: the network's id of it. `sentId`: when this device sent it,
 * the caller-chosen id it was sent with (OutgoingNetworkMessage.id); absent when someone else wrote it.
 */
export interface IncomingQuote {
  readonly networkId: string;
  readonly sentId?: string;
}

/** The content of an incoming message, by kind. */
export type IncomingContent =
  | { readonly type: 'chat'; readonly text: string }
  | {
      readonly type: 'image' | 'video' | 'file' | 'sticker';
      readonly caption?: string;
      readonly mimetype: string;
      /** A file's name, when the sender gave one. */
      readonly fileName?: string;
    }
  /** `ptt`: a voice note (recorded in the chat) rather than an audio file. */
  | { readonly type: 'audio'; readonly mimetype: string; readonly ptt?: boolean }
  | {
      readonly type: 'location';
      readonly latitude: number;
      readonly longitude: number;
      readonly name?: string;
      readonly address?: string;
    }
  /** Contact cards: each card's name and the phone numbers on it (digits only; a card may list none). */
  | { readonly type: 'contact'; readonly contacts: ReadonlyArray<IncomingContactCard> }
  /** `selectableCount`: how many options a voter may pick (1 … options.length). */
  | {
      readonly type: 'poll';
      readonly name: string;
      readonly options: ReadonlyArray<string>;
      readonly selectableCount: number;
    }
  | { readonly type: 'list_reply'; readonly rowId: string; readonly title: string }
  | { readonly type: 'button_reply'; readonly id: string; readonly displayText: string }
  /** A kind the gateway has no shape for yet, named by the network's own type: never dropped without a trace. */
  | { readonly type: 'unsupported'; readonly networkType: string };
