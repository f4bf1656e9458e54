import { BadRequestError, NotFoundError, ValidationError, Validator } from '../errors';
import { hmacHex, randomUrlSafe } from '../crypto';
import { parseId } from '../ids';
import { checkOffsetPage, fromTheEnd, type PageSource } from '../pagination';
import { tokensListedFor, tokensVisibleTo } from '../authorization';
import type { Viewer } from '../auth/viewer';
import { actorOf, describedFor } from '../audit/audit-log.repository';
import { scopeListProblem } from '../scopes';
import type { OAuthTokenRepository } from './oauth-token.repository';
import { NO_CLIENT, type OAuthTokenRecord } from './oauth-token.types';
import { mintedLife } from './token-minting';

export type { OAuthTokenRecord } from './oauth-token.types';

export interface CreateTokenInput {
  clientId?: unknown;
  scopes?: unknown;
}

/** Which tokens a list shows: `all` (else the viewer's own), of one client when `clientId` is set. */
export interface TokenListFilter {
  all: boolean;
  clientId?: unknown;
}

/** A client filter: absent = all clients; an id that names no client filters to nothing. */
function clientFilter(raw: unknown): bigint | undefined {
  if (raw === undefined || raw === null) return undefined;
  return parseId(raw) ?? NO_CLIENT;
}

/**
 * OAuth access tokens (docs/api.md, "OAuth tokens"): validation and Zendesk's rules. Which
 * tokens a viewer reaches is the policy's row scope (tokensVisibleTo), applied by
 * the repository in every statement.
 */
export class OAuthTokenService {
  constructor(private readonly tokens: OAuthTokenRepository, private readonly hashKey: Buffer) {}

  async create(viewer: Viewer, input: CreateTokenInput): Promise<OAuthTokenRecord> {
    const v = new Validator();
    let clientId: bigint | null = null;
    if (input.clientId === undefined || input.clientId === null || input.clientId === '') v.add('client_id', 'BlankValue', 'Client: cannot be blank');
    else {
      clientId = parseId(input.clientId);
      if (clientId === null) v.add('client_id', 'InvalidValue', 'Client: must be a positive integer');
    }
    const scopes = input.scopes;
    if (scopes === undefined || scopes === null || (Array.isArray(scopes) && scopes.length === 0)) v.add('scopes', 'BlankValue', 'Scopes: cannot be blank');
    else if (!Array.isArray(scopes) || !scopes.every((s) => typeof s === 'string')) v.add('scopes', 'InvalidValue', 'Scopes: must be an array of strings');
    else {
      const problem = scopeListProblem(scopes as string[]);
      if (problem) v.add('scopes', problem.error, `Scopes: ${problem.description}`);
    }
    v.throwIfAny();
    // A token creating a token hands out at most its own scopes, life and grant (token-minting.ts).
    const life = mintedLife(viewer, scopes as string[]);
    const token = randomUrlSafe(32); // 256 bits, 43 url-safe characters
    // As given: invalid scopes are kept, and make every request with the token fail (docs/api.md, "Scopes and roles").
    // the audit record is written by the same statement (no extra round trip on this hot path)
    const created = await this.tokens.insert(
      { accountId: viewer.accountId, userId: viewer.userId },
      { clientId: clientId!, tokenHash: hmacHex(this.hashKey, token), token, scopes: scopes as string[], ...life },
      { actor: actorOf(viewer), description: describedFor(viewer, `Created for client ${clientId} with scopes ${(scopes as string[]).join(' ')}`.slice(0, 1000)) },
    );
    // (or the minter's grant was revoked meanwhile: its token no longer authenticates, and its client may be gone)
    if (!created) throw new ValidationError({ client_id: [{ error: 'NotFound', description: `Client: ${clientId} was not found` }] });
    return created;
  }

  async find(viewer: Viewer, rawId: unknown): Promise<OAuthTokenRecord | null> {
    const id = parseId(rawId);
    return id === null ? null : this.tokens.find(tokensVisibleTo(viewer), id);
  }

  /** The token that authenticated this request; Basic auth presents none (→ 400). */
  async findCurrent(viewer: Viewer): Promise<OAuthTokenRecord> {
    if (!viewer.token) throw new BadRequestError('No access token was presented: use Authorization: Bearer <token>');
    // The authenticator has just read the live row (the hot path: one statement per request).
    return viewer.token.record;
  }

  async revoke(viewer: Viewer, rawId: unknown): Promise<void> {
    const id = parseId(rawId);
    // the actor is who revoked it: an admin revoking another user's token is the actor
    if (id === null || !(await this.tokens.revoke(tokensVisibleTo(viewer), id, { actor: actorOf(viewer), description: describedFor(viewer, 'Revoked') }))) {
      throw new NotFoundError();
    }
  }

  async revokeCurrent(viewer: Viewer): Promise<void> {
    if (!viewer.token) throw new BadRequestError('No access token was presented: use Authorization: Bearer <token>');
    // the token authenticated this request, so it is live and of the viewer's account
    await this.tokens.revoke({ accountId: viewer.accountId }, viewer.token.id, {
      actor: actorOf(viewer), description: describedFor(viewer, 'Revoked by presenting it (current token)'),
    });
  }

  // Lists show the viewer's own tokens, or with `all` every token the viewer may see (tokensListedFor).

  /** The tokens listed (id ascending) for readPage(); keyset pages cost the same at any depth. */
  pages(viewer: Viewer, filter: TokenListFilter): PageSource<OAuthTokenRecord> {
    const scope = tokensListedFor(viewer, filter.all);
    const clientId = clientFilter(filter.clientId);
    return {
      keyset: (page) => this.tokens.listKeyset(scope, clientId, fromTheEnd(page)),
      offset: (page) => {
        checkOffsetPage(page);
        return this.tokens.listOffset(scope, clientId, page);
      },
      count: () => this.tokens.count(scope, clientId),
    };
  }

  /** Up to `limit` tokens of each client that the viewer may see, for DataLoader batching of OAuthClient.tokens. */
  firstByClients(viewer: Viewer, clientIds: readonly bigint[], limit: number): Promise<OAuthTokenRecord[]> {
    return this.tokens.firstByClients(tokensVisibleTo(viewer), clientIds, limit);
  }
}
