/**
 * The `standard` webhook format (docs/internals.md, Webhooks): the stored event itself,
 * `{id, type, device: {id, phone}, created_at, data}`, sent byte for byte.
 *
 * Owns: nothing but saying so; the body is built where the event is recorded
 * (record.ts). Must never: re-serialise the payload (the stored text is what
 * the delivery log shows and what is signed).
 */
export function renderStandard(payload: string): string {
  return payload;
}
