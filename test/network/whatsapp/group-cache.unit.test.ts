// The connector's group metadata cache (src/network/whatsapp/group-cache.ts): bounded, aged out, one fetch for
// concurrent misses, and a change reported while a fetch is under way is never answered with that fetch's result.
import type { GroupMetadata } from 'baileys';
import { describe, expect, it } from 'vitest';
import { GroupMetadataCache } from '../../../src/network/whatsapp/group-cache.js';

const group = (id: string, subject = id) => ({ id, subject, participants: [] }) as unknown as GroupMetadata;

describe('the group metadata cache', () => {
  it('keeps at most its bound, the least recently used going first', () => {
    const cache = new GroupMetadataCache(2);
    cache.store(group('a@g.us'));
    cache.store(group('b@g.us'));
    cache.get('a@g.us');
    cache.store(group('c@g.us'));
    expect(cache.get('b@g.us')).toBeUndefined();
    expect(cache.get('a@g.us')?.id).toBe('a@g.us');
    expect(cache.get('c@g.us')?.id).toBe('c@g.us');
  });

  it('ages entries out', () => {
    let now = 0;
    const cache = new GroupMetadataCache(10, 1000, () => now);
    cache.store(group('a@g.us'));
    now = 1000;
    expect(cache.get('a@g.us')).toBeDefined();
    now = 2001;
    expect(cache.get('a@g.us')).toBeUndefined();
  });

  it('fetches a missing group once for concurrent asks, then answers from the cache', async () => {
    const cache = new GroupMetadataCache();
    let fetches = 0;
    const fetch = async (jid: string) => {
      fetches++;
      return group(jid);
    };
    await Promise.all([cache.lookup('a@g.us', fetch), cache.lookup('a@g.us', fetch)]);
    await cache.lookup('a@g.us', fetch);
    expect(fetches).toBe(1);
    cache.forget(['a@g.us']);
    await cache.lookup('a@g.us', fetch);
    expect(fetches).toBe(2);
  });

  it('does not keep a fetch that was under way when the group changed', async () => {
    const cache = new GroupMetadataCache();
    let release!: (g: GroupMetadata) => void;
    const stale = cache.lookup('a@g.us', () => new Promise((resolve) => (release = resolve)));
    cache.forget(['a@g.us']);
    release(group('a@g.us', 'before the change'));
    await stale;
    const fresh = await cache.lookup('a@g.us', async (jid) => group(jid, 'after the change'));
    expect(fresh.subject).toBe('after the change');
  });
});
