/**
 * The group metadata one connection has fetched, handed to Baileys (its `cachedGroupMetadata` socket option) so a
 * group send does not ask WhatsApp for the group's participants every time.
 *
 * Owns: the entries (at most `max` groups, least recently used out first, none older than `ttlMs`), fetching a
 * missing group once however many sends ask at the same moment, and forgetting a group when the network reports a
 * change to it (subject, settings, participants), so the next send fetches the group as it now is.
 * Must never: answer with metadata older than a change the network reported (a fetch that was under way when the
 * change came is not kept), or grow without bound.
 */
import type { GroupMetadata } from 'baileys';

interface Entry {
  readonly metadata: GroupMetadata;
  readonly at: number;
}

export class GroupMetadataCache {
  private readonly entries = new Map<string, Entry>();
  /** Fetches under way, by group: concurrent misses share one. */
  private readonly fetching = new Map<string, Promise<GroupMetadata>>();

  constructor(
    private readonly max = 256,
    private readonly ttlMs = 5 * 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** The cached metadata of a group, or undefined when absent or too old. */
  get(jid: string): GroupMetadata | undefined {
    const entry = this.entries.get(jid);
    if (entry === undefined) return undefined;
    this.entries.delete(jid);
    if (this.now() - entry.at > this.ttlMs) return undefined;
    // Re-inserted: the map's order is the order of use, oldest first.
    this.entries.set(jid, entry);
    return entry.metadata;
  }

  /** Keeps what was just fetched from the network; answers it. */
  store(metadata: GroupMetadata): GroupMetadata {
    this.entries.delete(metadata.id);
    this.entries.set(metadata.id, { metadata, at: this.now() });
    while (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value as string);
    return metadata;
  }

  /** The network reported a change to these groups: their next use fetches them again. */
  forget(jids: Iterable<string>): void {
    for (const jid of jids) {
      this.entries.delete(jid);
      this.fetching.delete(jid);
    }
  }

  /** Cached, or fetched once and kept (unless the group changed meanwhile): what Baileys asks before a group send. */
  async lookup(jid: string, fetch: (jid: string) => Promise<GroupMetadata>): Promise<GroupMetadata> {
    const cached = this.get(jid);
    if (cached !== undefined) return cached;
    let pending = this.fetching.get(jid);
    if (pending === undefined) {
      pending = fetch(jid);
      this.fetching.set(jid, pending);
      const mine = pending;
      pending.then(
        (metadata) => {
          // Forgotten while under way: a change came after the fetch was asked, so the answer may predate it.
          if (this.fetching.get(jid) !== mine) return;
          this.fetching.delete(jid);
          this.store(metadata);
        },
        () => {
          if (this.fetching.get(jid) === mine) this.fetching.delete(jid);
        },
      );
    }
    return pending;
  }
}
