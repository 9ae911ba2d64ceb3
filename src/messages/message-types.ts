/**
 * The message types `POST /messages` knows (spec 4.5), below the request schemas (schemas.ts) and their
 * examples (examples.ts), which both name them without importing each other.
 *
 * Owns: the list of types. Must never: import anything.
 */
export const MESSAGE_TYPES = [
  'chat',
  'image',
  'list',
  'file',
  'video',
  'audio',
  'location',
  'template',
  'sticker',
  'contact',
  'poll',
] as const;
export type MessageType = (typeof MESSAGE_TYPES)[number];
