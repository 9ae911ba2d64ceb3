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

/**
 * Incoming media as the network announces it, for the gateway to fetch later through the same device's connection
 * (NetworkConnection.downloadMedia). Plain data: stored as it is and handed back after a restart.
 */
export interface IncomingMedia {
  /** The network's own reference to the bytes (opaque to the gateway; a few KB at most). */
  readonly ref: string;
  /** The size in bytes, when the network announced one. */
  readonly size?: number;
  /** Hex SHA-256 of the (decrypted) bytes, when the network announced one. */
  readonly sha256?: string;
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
      /** Where to fetch the bytes; absent when the network gave no way to. */
      readonly media?: IncomingMedia;
    }
  /** `ptt`: a voice note (recorded in the chat) rather than an audio file. */
  | { readonly type: 'audio'; readonly mimetype: string; readonly ptt?: boolean; readonly media?: IncomingMedia }
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
