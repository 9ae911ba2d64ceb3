// How many devices a node claims or hands back in one round (docs/internals.md, Clusters: spread evenly, moved gradually).
import { describe, expect, it } from 'vitest';
import { balance, fairShare } from '../../src/cluster/balance.js';

describe('balancing devices across nodes', () => {
  it('gives each node the ceiling of its share', () => {
    expect(fairShare(60, 3)).toBe(20);
    expect(fairShare(61, 3)).toBe(21);
    expect(fairShare(60, 2)).toBe(30);
    expect(fairShare(0, 3)).toBe(0);
    // No live node counted (this one's own heartbeat not seen yet): it takes everything.
    expect(fairShare(7, 0)).toBe(7);
  });

  it('claims up to the share, at most the batch per round', () => {
    expect(balance({ wanted: 60, liveNodes: 2, held: 20, maxClaims: 100, maxReleases: 16 })).toEqual({
      target: 30,
      claim: 10,
      release: 0,
    });
    expect(balance({ wanted: 1000, liveNodes: 1, held: 0, maxClaims: 100, maxReleases: 16 })).toEqual({
      target: 1000,
      claim: 100,
      release: 0,
    });
  });

  it('hands back what is above the share, gradually, and never below it', () => {
    // A third node joined: each of the two holding 30 gives back 10, at most 4 a round.
    expect(balance({ wanted: 60, liveNodes: 3, held: 30, maxClaims: 100, maxReleases: 4 })).toEqual({
      target: 20,
      claim: 0,
      release: 4,
    });
    expect(balance({ wanted: 60, liveNodes: 3, held: 21, maxClaims: 100, maxReleases: 4 })).toEqual({
      target: 20,
      claim: 0,
      release: 1,
    });
    expect(balance({ wanted: 60, liveNodes: 3, held: 20, maxClaims: 100, maxReleases: 4 })).toEqual({
      target: 20,
      claim: 0,
      release: 0,
    });
  });
});
