/**
 * Path, body and config pieces shared by the group routes (routes.ts) and the group administration routes
 * (admin-routes.ts).
 *
 * Owns: the shape of a group reference in a path, the acting device's field, and which path field a 404 names.
 * Must never: hold a route or a rule.
 */
import { Type } from '@sinclair/typebox';
import { GROUP_REF_PATTERN } from './lookup.js';

/** A malformed group id in a path is the same 404 as an unknown one. */
export const notFoundById = { id: 'GROUP_NOT_FOUND' } as const;

/** The device a body names, if any (group bodies may carry one; send bodies are checked by the message service). */
export const bodyDevice = (body: unknown): unknown =>
  typeof body === 'object' && body !== null ? (body as { device?: unknown }).device : undefined;

/** `{group_id}`: the gateway's numeric id, or the group's JID (docs/internals.md, Whatspie compatibility). */
export const GroupRef = Type.String({
  pattern: GROUP_REF_PATTERN.source,
  maxLength: 64,
  description: 'The gateway’s id of the group, or the group’s network id (JID, `…@g.us`)',
  examples: ['12', '120363012345678901@g.us'],
});
export const GroupParams = Type.Object({ id: GroupRef });

/** With a JID: which of the account's devices acts, when several are in the group. */
export const ActingDevice = Type.String({
  maxLength: 32,
  description:
    'The number of the device that acts; needed only with a group JID when several of the account’s devices are in the group',
});
