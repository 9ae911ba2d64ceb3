/**
 * The sandbox's durable state on disk: sessions, phone settings, groups, each
 * device number's own profile and blocklist, and the chat settings (archive,
 * pin, mute) of each number as one JSON file, so a gateway restart finds its
 * paired devices still valid and as they were set.
 *
 * Owns: reading the file at start-up and writing it atomically (temp file +
 * rename), debounced, with a final flush on close. Must never: store inboxes,
 * the dedupe set or anything else that only matters while the process lives,
 * and never leave a half-written file behind.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { GroupSettings, ParticipantRole, PhoneNumber } from '../network.js';
import type { SandboxChatSettings, SandboxPhoneSettings } from '../sandbox-control.js';

export interface PersistedState {
  readonly version: 1;
  readonly sessions: ReadonlyArray<{ readonly token: string; readonly phone: PhoneNumber }>;
  /** One entry per (phone, view) with settings; `view` absent: the shared view (and every file saved before views). */
  readonly phones: ReadonlyArray<SandboxPhoneSettings & { readonly view?: string }>;
  readonly groups: ReadonlyArray<{
    readonly id: string;
    readonly subject: string;
    readonly description: string | null;
    readonly participants: ReadonlyArray<{ readonly phone: PhoneNumber; readonly role: ParticipantRole }>;
    /** Absent in files saved before groups had settings. */
    readonly settings?: GroupSettings;
    /** Absent when no invite code was ever made (and in files saved before invite links). */
    readonly invite?: string;
    /** Absent when the group has no picture (and in files saved before group pictures). */
    readonly picture?: string;
  }>;
  /** A device number's own name, about text, picture and blocked numbers. Absent in files saved before profiles. */
  readonly profiles?: ReadonlyArray<{
    readonly phone: PhoneNumber;
    readonly name: string | null;
    readonly about: string | null;
    readonly picture_url: string | null;
    readonly blocked: ReadonlyArray<PhoneNumber>;
  }>;
  /** One entry per (number, view, chat) set; `view` absent: the shared view. Absent in files saved before chats. */
  readonly chats?: ReadonlyArray<SandboxChatSettings & { readonly phone: PhoneNumber; readonly view?: string }>;
}

/** Long enough to coalesce a burst of changes (a 1000-member group), short enough to lose little on a crash. */
const DEBOUNCE_MS = 200;

export class StateFile {
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly path: string,
    private readonly snapshot: () => PersistedState,
  ) {}

  /** The saved state, or null when there is none yet. A corrupt file is an error: silently starting empty would log every device out. */
  load(): PersistedState | null {
    let text: string;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
    const state = JSON.parse(text) as PersistedState;
    if (state.version !== 1) throw new Error(`sandbox state ${this.path}: unknown version ${String(state.version)}`);
    return state;
  }

  schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.write();
    }, DEBOUNCE_MS);
    this.timer.unref();
  }

  /** Writes now if a write is pending; called on close. */
  flush(): void {
    if (!this.timer) return;
    clearTimeout(this.timer);
    this.timer = null;
    this.write();
  }

  private write(): void {
    try {
      mkdirSync(dirname(this.path), { recursive: true });
      const temp = `${this.path}.${process.pid}.tmp`;
      writeFileSync(temp, JSON.stringify(this.snapshot()));
      renameSync(temp, this.path);
    } catch (err) {
      // A failed write must not take the sandbox down; the next change retries.
      console.error('sandbox: could not save state to %s: %s', this.path, (err as Error).message);
    }
  }
}
