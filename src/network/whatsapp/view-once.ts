/**
 * View-once media keeps its mentions. Baileys 7.0.0-rc14 wraps view-once content first and adds the mentions (the
 * content's `contextInfo`) afterwards, to the wrapper, where WhatsApp's protobuf has no such field: encoding drops
 * them, so the recipient saw no mention. Given to the socket as `patchMessageBeforeSending`, this moves such a
 * context into the wrapped media message before anything is encrypted or recorded.
 *
 * Owns: that one repair, in place (the message the library returns to the connector, and the copy kept for resend
 * requests, are the same object, so they carry the mentions too).
 * Must never: change a message that has no misplaced context, or drop what the wrapped content already carries.
 */
import type { proto } from 'baileys';

/** The wrappers whose only field is the wrapped message (protobuf FutureProofMessage). */
const WRAPPERS = ['viewOnceMessage', 'viewOnceMessageV2', 'viewOnceMessageV2Extension'] as const;

type Wrapper = { message?: proto.IMessage | null; contextInfo?: proto.IContextInfo | null };

export function carryViewOnceContext(message: proto.IMessage): proto.IMessage {
  // A copy for the sender's own other devices wraps the message once more.
  const inner = message.deviceSentMessage?.message;
  if (inner !== null && inner !== undefined) carryViewOnceContext(inner);
  for (const name of WRAPPERS) {
    const wrapper = message[name] as Wrapper | null | undefined;
    const context = wrapper?.contextInfo;
    const wrapped = wrapper?.message;
    if (wrapper === null || wrapper === undefined || context === null || context === undefined) continue;
    delete wrapper.contextInfo;
    if (wrapped === null || wrapped === undefined) continue;
    const kind = Object.keys(wrapped).find((key) => key.endsWith('Message'));
    const content = kind === undefined ? undefined : (wrapped as Record<string, unknown>)[kind];
    if (content === null || typeof content !== 'object') continue;
    const target = content as { contextInfo?: proto.IContextInfo | null };
    target.contextInfo = { ...context, ...(target.contextInfo ?? {}) };
  }
  return message;
}
