/**
 * The plain values the network seam speaks in: phone numbers, group ids, a group and its members, and a change to
 * a message (what it names, what it does).
 *
 * Owns: those shapes, so that both the seam (network.ts) and the sandbox control interface
 * (sandbox-control.ts) name them without importing each other.
 * Must never: import anything, or hold behaviour.
 */
/** Digits only, country code first, no `+` (spec 4.5 rule 1). */
export type PhoneNumber = string;

/** Identifier of a group on the network (e.g. `120363012345678901@g.us`). */
export type NetworkGroupId = string;

export type ParticipantRole = null | 'admin' | 'superadmin';

export interface NetworkParticipant {
  readonly phone: PhoneNumber;
  readonly name?: string;
  readonly role: ParticipantRole;
}

export interface NetworkGroup {
  readonly id: NetworkGroupId;
  readonly subject: string;
  readonly description: string | null;
  readonly participants: ReadonlyArray<NetworkParticipant>;
  /** Maximum members the network allows (1024). */
  readonly capacity: number;
  /** The group's settings, when the network reports them. */
  readonly settings?: GroupSettings;
  /** Names the group's current picture (changes when the picture does), when the network reports one. */
  readonly pictureId?: string | null;
}

/** Who may do what in a group, and whether its messages disappear (docs/internals.md, Whatspie compatibility). */
export interface GroupSettings {
  /** Only admins may post. */
  readonly onlyAdminsCanSend: boolean;
  /** Only admins may change the group's subject, description and disappearing messages. */
  readonly onlyAdminsCanEdit: boolean;
  /** Seconds after which new messages disappear; 0 when they do not. */
  readonly disappearingSeconds: number;
}

/** The message a change is about, named as a quoted message is (network.ts, QuotedMessage). */
export interface ChangedMessage {
  /** A message this device sent: the caller-chosen id it was sent with; one it received: the network's id of it. */
  readonly id: string;
  /** True when this device sent the message. */
  readonly fromMe: boolean;
}

/** What was done to a message: a reaction (`""` takes it away), an edit by its author, a delete for everyone. */
export type MessageChange =
  | { readonly kind: 'reaction'; readonly emoji: string }
  | { readonly kind: 'edited'; readonly text: string }
  | { readonly kind: 'deleted' };

/** What `updateGroup` may change; each absent field stays as it is. */
export interface GroupChanges {
  readonly subject?: string;
  readonly description?: string;
  readonly onlyAdminsCanSend?: boolean;
  readonly onlyAdminsCanEdit?: boolean;
  /** 0 turns disappearing messages off. */
  readonly disappearingSeconds?: number;
}

export type GroupSettingName = keyof GroupChanges;
