/**
 * The bearer-token gate in front of every route.
 *
 * Owns: deciding, before the body is even read, whether a request may go on;
 * attaching the caller's account to the request. Routes opt out only with
 * `config: { public: true }` (health, readiness, OpenAPI, docs).
 * Must never: tell apart a missing, malformed, unknown or revoked token: each
 * is the same 401.
 */
import type { FastifyInstance } from 'fastify';
import type { AccountsService, AuthContext } from '../accounts/service.js';
import { ApiError } from '../errors.js';
import { sendError } from './error-handler.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Reachable without a token. */
    public?: boolean;
    /**
     * A WebSocket route: the token may also come as the subprotocol `bearer.<token>` (browsers cannot set headers on
     * a WebSocket; a token never goes in a URL). The route's server selects that subprotocol in its answer.
     */
    bearerSubprotocol?: boolean;
  }
  interface FastifyRequest {
    auth: AuthContext;
  }
}

export function installAuth(app: FastifyInstance, accounts: AccountsService): void {
  app.decorateRequest('auth', null as unknown as AuthContext);
  // Callback style, so the common case (a token checked moments ago) costs no promise.
  app.addHook('onRequest', (request, reply, done) => {
    if (request.is404 || request.routeOptions.config.public === true) return done();
    const header =
      request.headers.authorization ??
      (request.routeOptions.config.bearerSubprotocol === true
        ? subprotocolBearer(request.headers['sec-websocket-protocol'])
        : undefined);
    const known = accounts.authenticateCached(header);
    if (known !== undefined) {
      request.auth = known;
      return done();
    }
    accounts.authenticate(header).then((auth) => {
      if (auth === null) return void sendError(reply, new ApiError('UNAUTHORIZED'));
      request.auth = auth;
      done();
    }, done);
  });
}

export const BEARER_SUBPROTOCOL_PREFIX = 'bearer.';

/** `Bearer <token>` from a `Sec-WebSocket-Protocol` list holding `bearer.<token>`, or undefined. */
export function subprotocolBearer(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  for (const offered of header.split(',')) {
    const protocol = offered.trim();
    if (protocol.startsWith(BEARER_SUBPROTOCOL_PREFIX))
      return `Bearer ${protocol.slice(BEARER_SUBPROTOCOL_PREFIX.length)}`;
  }
  return undefined;
}

/** The account id of an authenticated request. */
export function accountOf(request: { auth: AuthContext }): number {
  return request.auth.accountId;
}
