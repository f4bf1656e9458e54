import { tenantTransaction } from '../../db/tenant-sql';
import type { RepositoryFactory, Transactions } from '../repositories';
import { NotFoundError, Validator } from '../errors';
import { hmacHex, randomUrlSafe } from '../crypto';
import { parseId } from '../ids';
import { accountScope } from '../authorization';
import { checkOffsetPage, fromTheEnd, type PageSource } from '../pagination';
import type { Viewer } from '../auth/viewer';
import { actorOf, describedFor, recordAudit } from '../audit/audit-log.repository';
import { textField } from '../directory/acting';
import { apiTokenDetail } from '../events/event-details';
import { API_TOKEN_PREFIX_LENGTH, type ApiTokenRecord, type ApiTokenRepository } from './api-token.repository';

export type { ApiTokenRecord } from './api-token.repository';

export interface ApiTokenInput {
  description?: unknown;
}

/**
 * The account's API tokens (docs/api.md, "API tokens"): admins create, list, show and
 * delete them. A token is random (as access tokens are), stored as a keyed hash and its
 * first characters, shown in full once. Every change runs in one transaction with its
 * audit record and its event, neither of which ever holds the token.
 */
export class ApiTokenService {
  constructor(
    private readonly db: Transactions,
    private readonly tokens: ApiTokenRepository,
    private readonly repos: RepositoryFactory,
    private readonly hashKey: Buffer,
  ) {}

  async find(viewer: Viewer, rawId: unknown): Promise<ApiTokenRecord | null> {
    const id = parseId(rawId);
    return id === null ? null : this.tokens.find(accountScope(viewer), id);
  }

  /** The account's tokens, id ascending, for readPage(). */
  pages(viewer: Viewer): PageSource<ApiTokenRecord> {
    const scope = accountScope(viewer);
    return {
      keyset: (page) => this.tokens.listKeyset(scope, fromTheEnd(page)),
      offset: (page) => {
        checkOffsetPage(page);
        return this.tokens.listOffset(scope, page);
      },
      count: () => this.tokens.count(scope),
    };
  }

  create(viewer: Viewer, input: ApiTokenInput): Promise<ApiTokenRecord> {
    const v = new Validator();
    const description = textField(v, 'description', 'Description', input.description, { required: true, max: 255 });
    v.throwIfAny();
    const token = randomUrlSafe(32); // 256 bits, as access tokens
    return tenantTransaction(this.db, async (sql) => {
      const created = await this.repos(sql).apiTokens.insert(
        { ...accountScope(viewer), createdBy: viewer.userId },
        { description: description!, token, tokenHash: hmacHex(this.hashKey, token) },
        API_TOKEN_PREFIX_LENGTH,
      );
      const detail = apiTokenDetail(created);
      await recordAudit(sql, actorOf(viewer), {
        action: 'create', sourceType: 'api_token', sourceId: created.id, sourceLabel: String(detail.token), changedFields: ['description'],
        description: describedFor(viewer, `Created API token "${created.description}"`),
        event: { name: 'api_token.created', subject: `api_token:${created.id}`, detail },
      });
      return created;
    });
  }

  /** Deletes the token: the row is gone, so the very next sign-in with it fails, in every process. */
  async delete(viewer: Viewer, rawId: unknown): Promise<void> {
    const id = parseId(rawId);
    if (id === null) throw new NotFoundError();
    await tenantTransaction(this.db, async (sql) => {
      const deleted = await this.repos(sql).apiTokens.delete(accountScope(viewer), id);
      if (!deleted) throw new NotFoundError();
      const detail = apiTokenDetail(deleted);
      await recordAudit(sql, actorOf(viewer), {
        action: 'destroy', sourceType: 'api_token', sourceId: id, sourceLabel: String(detail.token),
        description: describedFor(viewer, `Deleted API token "${deleted.description}"`),
        event: { name: 'api_token.deleted', subject: `api_token:${id}`, detail },
      });
    });
  }
}
