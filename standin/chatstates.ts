/**
 * What linked devices tell the server of their presence and chat states (issue 26; docs/standin.md): a `presence`
 * stanza (`type` available or unavailable) and a `chatstate` stanza (`to` a chat; a child `composing`, `composing`
 * with `media="audio"` for recording a voice note, or `paused`).
 *
 * Owns: recording them, in order, bounded, for `GET /control/presence` (a test checks what a device told). Nothing
 * is forwarded to phones: the stand-in's phones do not show presence.
 * Must never: answer such a stanza (the real server does not), or grow without bound.
 */
import type { BinaryNode } from 'baileys';
import type { Companion } from './world.js';

export interface SeenPresence {
  /** The device's account number. */
  readonly from: string;
  readonly state: string;
  /** The chat a chat state is for, as the device addressed it. */
  readonly to?: string;
  readonly at: string;
}

/** Stanzas kept: plenty for a test run. */
const KEPT = 1000;

export function recordPresence(seen: SeenPresence[], companion: Companion, node: BinaryNode): void {
  const at = new Date().toISOString();
  const from = companion.account.phone;
  if (node.tag === 'presence') {
    const type = node.attrs.type;
    if (type === 'available' || type === 'unavailable') seen.push({ from, state: type, at });
  } else if (node.tag === 'chatstate') {
    const child = Array.isArray(node.content) ? node.content[0] : undefined;
    if (child === undefined || node.attrs.to === undefined) return;
    const state = child.tag === 'composing' && child.attrs.media === 'audio' ? 'recording' : child.tag;
    seen.push({ from, state, to: node.attrs.to, at });
  }
  if (seen.length > KEPT) seen.splice(0, seen.length - KEPT);
}
