// docs/webhooks.md, Poll votes: a network that names a vote's options by the SHA-256 of their text (WhatsApp) has
// them matched back to the poll's options, in the poll's order; a hash of no option makes the vote unreadable.
import { describe, expect, it } from 'vitest';
import { optionsForHashes, pollOptionHash } from '../../src/network/poll-options.js';

describe('poll option hashes', () => {
  it('is the lowercase hex SHA-256 of the UTF-8 text', () => {
    expect(pollOptionHash('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(pollOptionHash('Café')).not.toBe(pollOptionHash('Cafe'));
  });

  it('matches hashes to options in the poll’s order, each once, in either case', () => {
    const options = ['Mon', 'Wed', 'Fri'];
    const hashes = ['Fri', 'Mon', 'Fri'].map(pollOptionHash);
    expect(optionsForHashes(options, hashes)).toEqual(['Mon', 'Fri']);
    expect(optionsForHashes(options, [pollOptionHash('Wed').toUpperCase()])).toEqual(['Wed']);
    expect(optionsForHashes(options, [])).toEqual([]);
  });

  it('answers null when a hash names no option', () => {
    expect(optionsForHashes(['Mon'], [pollOptionHash('Mon'), pollOptionHash('Tue')])).toBeNull();
  });
});
