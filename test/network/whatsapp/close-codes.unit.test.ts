// Issue 24, hardening: every close code Baileys 7 produces has a decided meaning (docs/whatsapp.md, Close codes),
// and the refusal codes of acknowledgements say whether a later attempt can pass.
import { describe, expect, it } from 'vitest';
import { ackRefusalKind, closeAction } from '../../../src/network/whatsapp/close-codes.js';

function boom(statusCode: number, message = 'Connection Failure'): Error {
  return Object.assign(new Error(message), { output: { statusCode } });
}

describe('close codes', () => {
  it.each([
    [515, false, { kind: 'restart' }],
    [408, true, { kind: 'new-qr-socket' }, 'QR refs attempts ended'],
    [401, false, { kind: 'logged_out' }],
    [402, false, { kind: 'logged_out' }],
    [403, false, { kind: 'logged_out' }],
    [406, false, { kind: 'logged_out' }],
    [411, false, { kind: 'logged_out' }, 'Multi-device beta not joined'],
    [440, false, { kind: 'disconnected', retry: 'replaced' }],
    [405, false, { kind: 'disconnected', retry: 'outdated' }],
    [408, false, { kind: 'disconnected', retry: 'backoff' }, 'Connection was lost'],
    [428, false, { kind: 'disconnected', retry: 'backoff' }, 'Connection Terminated'],
    [500, false, { kind: 'disconnected', retry: 'backoff' }, 'Stream Errored (unknown)'],
    [503, false, { kind: 'disconnected', retry: 'backoff' }],
    [479, false, { kind: 'disconnected', retry: 'backoff' }],
    [599, false, { kind: 'disconnected', retry: 'backoff' }],
  ] as const)('%i (pairing: %s) → %o', (code, pairing, expected, message?: string) => {
    expect(closeAction(boom(code, message), pairing)).toMatchObject(expected);
  });

  it('405 names the fix: the version setting', () => {
    const action = closeAction(boom(405), false);
    expect(action.kind === 'disconnected' && action.reason).toMatch(/too old.*GATEWAY_WHATSAPP_VERSION/);
  });

  it('a close with no code is a drop the gateway backs off from', () => {
    expect(closeAction(new Error('socket hang up'), false)).toMatchObject({ kind: 'disconnected', retry: 'backoff' });
  });
});

describe('acknowledgement refusals', () => {
  it('479 (smax-invalid) may pass on a later attempt; 463 and the rest never do', () => {
    expect(ackRefusalKind('479')).toBe('transient');
    expect(ackRefusalKind('463')).toBe('permanent');
    expect(ackRefusalKind('400')).toBe('permanent');
  });
});
