// Owns the numbers every message limit is checked against (spec 8, docs/internals.md, Sending, and the choices
// this module made where both are silent). It must never hold logic: a limit changes here, once.

/** Chat text and media captions, in user-perceived characters (spec 4.5 rule 2). */
export const TEXT_MAX = 4096;

/** List messages (spec 2.4 and 8, docs/internals.md, Sending). Lengths in user-perceived characters. */
export interface ListLimits {
  readonly title: number;
  readonly text: number;
  readonly footer: number;
  readonly buttonText: number;
  readonly sections: number;
  readonly sectionTitle: number;
  readonly rowsPerSection: number;
  readonly rowsTotal: number;
  readonly rowTitle: number;
  readonly rowId: number;
  readonly rowDescription: number;
}

export const LIST_LIMITS: ListLimits = {
  title: 24,
  text: 1024,
  footer: 60,
  buttonText: 20,
  sections: 10,
  sectionTitle: 24,
  rowsPerSection: 10,
  rowsTotal: 100,
  rowTitle: 24,
  rowId: 200,
  rowDescription: 72,
};

/** Template (button) messages (docs/internals.md, Sending). Lengths in user-perceived characters. */
export const TEMPLATE_LIMITS = {
  text: 1024,
  footer: 60,
  buttons: 3,
  displayText: 20,
  replyId: 200,
} as const;

/** Location name and address, in user-perceived characters (a limit of the gateway's own; the contract names none). */
export const LOCATION_TEXT_MAX = 1000;

/** Numbers one message may mention: a whole group (the network's group size). */
export const MENTIONS_MAX = 1024;

/** A quoted message's id: ours are 26 characters, the network's shorter; room for other networks' forms. */
export const QUOTED_ID_MAX = 128;

/** Contact cards of one message (DECISIONS 15). Lengths in user-perceived characters (the name and company: ours). */
export const CONTACT_LIMITS = { contacts: 10, name: 256, organization: 256 } as const;

/** Polls (DECISIONS 15). Lengths in user-perceived characters. */
export const POLL_LIMITS = { name: 255, minOptions: 2, maxOptions: 12, option: 100 } as const;
