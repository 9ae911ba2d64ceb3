/**
 * Accounts and API tokens: authentication, token management, bootstrap.
 *
 * Owns: the rules of docs/internals.md, Accounts and tokens: a token is shown once, only its hash is
 * kept, any failure is the same 401, the first start creates the `default`
 * account. Authentication is cached briefly in memory (the hot path of every
 * request), keyed by the presented secret so a hit costs no hashing. Revoking
 * through this process drops the cache entry at once; a revocation by another
 * process (the CLI, another node) reaches this one within a second: through
 * the store's revocation counter, re-read at most every REVOCATION_CHECK_MS,
 * and on PostgreSQL also through a notification (docs/security.md).
 * Must never: log or return a secret except the one `createToken` answer;
 * answer from the cache when the counter was last read more than
 * REVOCATION_TRUST_MS ago.
 */
import type { Clock } from '../clock.js';
import { channelOf, notify } from '../cluster/signals.js';
import type { SandboxScope } from '../network/create.js';
import type { Store } from '../store/store.js';
import { accountsRepository, tokensRepository, type AccountRow, type TokenRow } from './repository.js';
import { bearerSecret, displayPrefix, generateTokenSecret, hashToken } from './tokens.js';

export const DEFAULT_ACCOUNT = 'default';
export const DEFAULT_MAX_DEVICES = 10;
const AUTH_CACHE_TTL_MS = 10_000;
const AUTH_CACHE_MAX = 10_000;
/** last_used_at is a hint, not an audit log: write it at most this often per token. */
const TOUCH_EVERY_MS = 60_000;
/** While requests flow, the revocation counter is re-read in the background this often. */
const REVOCATION_CHECK_MS = 250;
/** A counter read older than this is not trusted: the request waits for a fresh one (an idle gateway's first request). */
const REVOCATION_TRUST_MS = 750;
/** What a revoking PostgreSQL transaction notifies every node of (cluster/signals.ts carries it). */
export const TOKENS_REVOKED_SIGNAL = 'r';

export interface AuthContext {
  readonly accountId: number;
  readonly tokenId: number;
}

export interface CreatedToken extends TokenRow {
  /** The secret. Returned once, never again. */
  readonly token: string;
}

export class AccountsError extends Error {}

/** An account as shown to operators and clients: `sandbox` says where its devices are on this gateway. */
export type Account = AccountRow;

export class AccountsService {
  /** Presented secret → its account, for AUTH_CACHE_TTL_MS. Lives only in this process's memory. */
  private readonly cache = new Map<string, { context: AuthContext; at: number }>();
  private readonly touchedAt = new Map<number, number>();
  /**
   * Counts revocations started here and cache drops for revocations elsewhere. A check that read a
   * token before a revocation and finishes after it answers as it read, but must not cache: the
   * token would outlive its revocation by the cache's lifetime.
   */
  private revocations = 0;
  /**
   * The store's revocation counter as last read, when (Date.now(): real time, not the injected clock, which
   * tests may stop), and the read under way.
   */
  private revision: number | null = null;
  private revisionReadAt = Number.NEGATIVE_INFINITY;
  private revisionRead: Promise<void> | null = null;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly onBackgroundError: (error: unknown) => void = () => undefined,
    private readonly sandboxScope: SandboxScope = 'every-account',
  ) {}

  /**
   * The account behind an Authorization header when it was recently checked,
   * without waiting (the common case); undefined when `authenticate` must ask
   * the store.
   */
  authenticateCached(header: string | undefined): AuthContext | undefined {
    const secret = bearerSecret(header);
    if (secret === null) return undefined;
    const age = Date.now() - this.revisionReadAt;
    // A clock set back (negative age) trusts nothing either.
    if (age >= REVOCATION_TRUST_MS || age < 0) return undefined;
    // One background read at a time; a request arriving while it runs adds nothing (not even a promise).
    if (age >= REVOCATION_CHECK_MS && this.revisionRead === null) this.readRevision().catch(() => undefined);
    const now = this.clock.now();
    const cached = this.cache.get(secret);
    if (cached === undefined || now - cached.at >= AUTH_CACHE_TTL_MS) return undefined;
    this.touch(cached.context.tokenId, now);
    return cached.context;
  }

  /** The account behind an Authorization header, or null for any kind of failure. */
  async authenticate(header: string | undefined): Promise<AuthContext | null> {
    // A store outage fails this read, and so the request with 503, as the token lookup would.
    const age = Date.now() - this.revisionReadAt;
    if (age >= REVOCATION_TRUST_MS || age < 0) await this.readRevision();
    const known = this.authenticateCached(header);
    if (known !== undefined) return known;
    const secret = bearerSecret(header);
    if (secret === null) return null;
    const now = this.clock.now();
    const revocationsBefore = this.revocations;
    const row = await tokensRepository.findActiveByHash(this.store.db, hashToken(secret));
    if (row === undefined) {
      this.cache.delete(secret);
      return null;
    }
    const context: AuthContext = { accountId: row.account_id, tokenId: row.id };
    if (revocationsBefore === this.revocations) {
      if (this.cache.size >= AUTH_CACHE_MAX) this.cache.delete(this.cache.keys().next().value as string);
      this.cache.set(secret, { context, at: now });
    }
    this.touch(row.id, now);
    return context;
  }

  /**
   * Re-reads the store's revocation counter (one read at a time, shared); a change means a token was
   * revoked somewhere, maybe one cached here: the whole cache goes (revocations are rare).
   */
  private readRevision(): Promise<void> {
    if (this.revisionRead !== null) return this.revisionRead;
    // The time the read began: a revocation committed after it is caught by the next read.
    const startedAt = Date.now();
    const read = tokensRepository
      .revocationRevision(this.store.db)
      .then((revision) => {
        if (this.revision !== null && revision !== this.revision) this.revokedElsewhere();
        this.revision = revision;
        this.revisionReadAt = Math.max(this.revisionReadAt, startedAt);
      })
      .finally(() => {
        this.revisionRead = null;
      });
    this.revisionRead = read;
    return read;
  }

  /**
   * A token was (or may have been) revoked by another process: nothing cached is trusted any more.
   * Called on a notification from PostgreSQL, after the listener reconnects, and on a counter change.
   */
  revokedElsewhere(): void {
    this.revocations += 1;
    this.cache.clear();
  }

  private touch(tokenId: number, now: number): void {
    const last = this.touchedAt.get(tokenId);
    if (last !== undefined && now - last < TOUCH_EVERY_MS) return;
    this.touchedAt.set(tokenId, now);
    tokensRepository.touch(this.store.db, tokenId, now).catch(this.onBackgroundError);
  }

  async createToken(accountId: number, name: string): Promise<CreatedToken> {
    const token = generateTokenSecret();
    const row = await tokensRepository.insert(
      this.store.db,
      accountId,
      name,
      displayPrefix(token),
      hashToken(token),
      this.clock.now(),
    );
    return { ...row, token };
  }

  listTokens(accountId: number): Promise<TokenRow[]> {
    return tokensRepository.listActive(this.store.db, accountId);
  }

  async revokeToken(accountId: number, tokenId: number): Promise<boolean> {
    // Counted before the write: a check reading the token from now on no longer caches it.
    this.revocations += 1;
    const shared = this.store.capabilities.sharedByProcesses;
    const revoked = await this.store.db.transaction().execute(async (trx) => {
      if (!(await tokensRepository.revoke(trx, accountId, tokenId, this.clock.now()))) return false;
      await tokensRepository.bumpRevocations(trx);
      // Delivered to every node once this commits (SQLite has one gateway process: the counter reaches it).
      if (shared) await notify(trx, await channelOf(trx), TOKENS_REVOKED_SIGNAL);
      return true;
    });
    // Counted again once committed: a check that read the token before the commit and finishes after this line
    // (after the entries below went) must not cache what it read either.
    this.revocations += 1;
    if (revoked) {
      for (const [secret, entry] of this.cache) {
        if (entry.context.tokenId === tokenId) this.cache.delete(secret);
      }
    }
    return revoked;
  }

  /**
   * First start: create the `default` account with one token, returned so the
   * caller can print it once. With a configured token, make sure that exact
   * token belongs to the default account (idempotent across restarts).
   */
  async bootstrap(configuredToken: string | null): Promise<{ printedToken: string | null }> {
    // Nodes of a cluster start together on an empty store: the first decides, the others wait and find its
    // account and token (checking then inserting, unserialized, made two of them insert `default`).
    return this.store.serialized('gateway.bootstrap', async (trx) => {
      const now = this.clock.now();
      let account = await accountsRepository.findByName(trx, DEFAULT_ACCOUNT);
      const isEmpty = (await accountsRepository.countAccounts(trx)) === 0;
      if (account === undefined && isEmpty) {
        account = await accountsRepository.insert(trx, DEFAULT_ACCOUNT, DEFAULT_MAX_DEVICES, now);
      }
      if (configuredToken !== null) {
        account ??= await accountsRepository.insert(trx, DEFAULT_ACCOUNT, DEFAULT_MAX_DEVICES, now);
        const hash = hashToken(configuredToken);
        if (!(await tokensRepository.existsByHash(trx, hash))) {
          await tokensRepository.insert(trx, account.id, 'bootstrap', displayPrefix(configuredToken), hash, now);
        }
        return { printedToken: null };
      }
      if (!isEmpty || account === undefined) return { printedToken: null };
      const token = generateTokenSecret();
      await tokensRepository.insert(trx, account.id, 'bootstrap', displayPrefix(token), hashToken(token), now);
      return { printedToken: token };
    });
  }

  /** With `sandbox`, the account's devices live on the sandbox whatever network the gateway runs (docs/internals.md, WhatsApp and sandbox accounts). */
  async createAccount(
    name: string,
    maxDevices = DEFAULT_MAX_DEVICES,
    options: { readonly sandbox?: boolean } = {},
  ): Promise<Account> {
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(name)) {
      throw new AccountsError('account names are 1-64 letters, digits, dots, dashes or underscores');
    }
    if ((await accountsRepository.findByName(this.store.db, name)) !== undefined) {
      throw new AccountsError(`account "${name}" already exists`);
    }
    return this.shown(await accountsRepository.insert(this.store.db, name, maxDevices, this.clock.now(), options));
  }

  async listAccounts(): Promise<Account[]> {
    return (await accountsRepository.list(this.store.db)).map((row) => this.shown(row));
  }

  async findAccount(name: string): Promise<Account> {
    const account = await accountsRepository.findByName(this.store.db, name);
    if (account === undefined) throw new AccountsError(`no account named "${name}"`);
    return this.shown(account);
  }

  /** The account behind an authenticated request (it exists: its token was just checked). */
  async account(accountId: number): Promise<Account> {
    const account = await accountsRepository.findById(this.store.db, accountId);
    if (account === undefined) throw new AccountsError(`no account ${accountId}`);
    return this.shown(account);
  }

  /** Whether the account's devices are on the sandbox here (then the sandbox control API serves them). */
  async isSandbox(accountId: number): Promise<boolean> {
    return this.sandboxScope === 'every-account' || (await this.account(accountId)).sandbox;
  }

  /** Where the sandbox is the gateway's only network, every account is a sandbox account. */
  private shown(row: AccountRow): Account {
    return this.sandboxScope === 'every-account' ? { ...row, sandbox: true } : row;
  }

  async setMaxDevices(name: string, maxDevices: number): Promise<void> {
    if (!Number.isInteger(maxDevices) || maxDevices < 0) throw new AccountsError('the device limit is a whole number');
    if (!(await accountsRepository.setMaxDevices(this.store.db, name, maxDevices, this.clock.now()))) {
      throw new AccountsError(`no account named "${name}"`);
    }
  }
}
