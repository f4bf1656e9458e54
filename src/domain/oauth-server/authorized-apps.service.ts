import { tenantTransaction } from '../../db/tenant-sql';
import { actorOf, describedFor } from '../audit/audit-log.repository';
import type { Viewer } from '../auth/viewer';
import { NotFoundError } from '../errors';
import { parseId } from '../ids';
import type { RepositoryFactory, Transactions } from '../repositories';
import type { AuthorizedAppRepository, PersonScope } from './authorized-app.repository';
import { revokeFamilyTokens } from './oauth-server.deps';

/** An app the person allowed (a grant), or a token issued to them outside a consent. */
export interface AuthorizedApp {
  /** `grant-<grant id>` for a consent (authorization code flow); `token-<token id>` for a token issued outside a grant */
  id: string;
  kind: 'grant' | 'token';
  client: { id: bigint; name: string; company: string | null };
  scopes: string[];
  /** the grant's or the token's created_at */
  grantedAt: Date;
  /** the latest used_at of the grant's tokens (a rotated one's too) / the token's used_at */
  lastUsedAt: Date | null;
}

/** At most this many entries are listed, the newest (docs/api.md, "Your authorized apps"). */
const AUTHORIZED_APPS_MAX = 200;

/** `grant-<id>` / `token-<id>` → what it names; null for anything else (→ 404). */
function parseAppId(raw: unknown): { kind: 'grant' | 'token'; id: bigint } | null {
  if (typeof raw !== 'string') return null;
  const m = /^(grant|token)-(.*)$/.exec(raw);
  const id = m && parseId(m[2]);
  return m && id !== null ? { kind: m[1] as 'grant' | 'token', id } : null;
}

/**
 * A person's own authorized apps (docs/api.md, "Your authorized apps"): every
 * user, whatever their role, lists and revokes their own live entries, and only
 * those (another user's or account's id is not found). Revoking a grant revokes
 * it and every token of its family in one transaction (as a refresh-token replay
 * does); revoking a token entry revokes that token. Both write an audit record
 * and an oauth_token.revoked event per token revoked, the person being the actor.
 */
export class AuthorizedAppsService {
  constructor(private readonly db: Transactions, private readonly apps: AuthorizedAppRepository, private readonly repos: RepositoryFactory) {}

  /** The viewer's live entries, newest first (granted at, then id, descending), at most AUTHORIZED_APPS_MAX. */
  async list(viewer: Viewer): Promise<AuthorizedApp[]> {
    const rows = await this.apps.list(personOf(viewer), AUTHORIZED_APPS_MAX);
    return rows.map((r) => ({
      id: `${r.kind}-${r.id}`, kind: r.kind, client: { id: r.clientId, name: r.clientName, company: r.clientCompany }, scopes: r.scopes,
      grantedAt: r.grantedAt, lastUsedAt: r.lastUsedAt,
    }));
  }

  /** Revokes one of the viewer's live entries; NotFoundError for anything else (nothing changes). */
  async revoke(viewer: Viewer, rawId: string): Promise<void> {
    const ref = parseAppId(rawId);
    if (ref === null) throw new NotFoundError();
    const person = personOf(viewer);
    const actor = actorOf(viewer);
    if (ref.kind === 'token') {
      const revoked = await this.apps.revokeToken(person, ref.id, { actor, description: describedFor(viewer, 'Revoked by its user (authorized apps)') });
      if (!revoked) throw new NotFoundError();
      return;
    }
    const revoked = await tenantTransaction(this.db, async (sql) => {
      const tx = this.repos(sql);
      // the grant first: this waits for a statement issuing one of its tokens, which the next one then sees
      if (!(await tx.grants.revokeOwn(person, ref.id))) return false;
      await revokeFamilyTokens(sql, tx, { accountId: person.accountId, grantId: ref.id }, {
        origin: actor.origin, by: { userId: actor.actorId!, name: actor.actorName },
        description: describedFor(viewer, `Revoked with its grant ${ref.id} by its user (authorized apps)`),
      });
      return true;
    });
    if (!revoked) throw new NotFoundError();
  }
}

const personOf = (viewer: Viewer): PersonScope => ({ accountId: viewer.accountId, userId: viewer.userId });
