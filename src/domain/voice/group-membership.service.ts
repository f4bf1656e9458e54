import { tenantTransaction } from '../../db/tenant-sql';
import type { RepositoryFactory, Transactions } from '../repositories';
import { recordAudit, type AuditEntry } from '../audit/audit-log.repository';
import { NotFoundError, Validator } from '../errors';
import { parseId } from '../ids';
import { checkOffsetPage, type OffsetPage } from '../pagination';
import { auditActorOf, scopeOf, type Acting } from '../directory/acting';
import type { GroupRepository } from '../directory/group.repository';
import type { UserRepository } from '../directory/user.repository';
import type { GroupMembershipFilter, GroupMembershipRecord, GroupMembershipRepository, RemovedGroupMembership } from './group-membership.repository';

export type { GroupMembershipRecord } from './group-membership.repository';

export interface GroupMembershipInput {
  userId?: unknown;
  groupId?: unknown;
}

/** The filter of a list as given (ids of the request): none, a group, a user, or both. */
export interface GroupMembershipListFilter {
  groupId?: unknown;
  userId?: unknown;
}

/** Shows at most 50 characters of what the caller sent, so a huge value cannot flood the response. */
function shown(value: unknown): string {
  const s = String(value);
  return s.length > 50 ? `${s.slice(0, 50)}…` : s;
}

/** A required id field: blank, not an id (NotFound), or the id. */
function idField(v: Validator, field: string, label: string, raw: unknown): bigint | undefined {
  if (raw === undefined || raw === null || raw === '') {
    v.add(field, 'BlankValue', `${label}: cannot be blank`);
    return undefined;
  }
  const id = parseId(raw);
  if (id === null) v.add(field, 'NotFound', `${label}: ${shown(raw)} not found`);
  return id ?? undefined;
}

const label = (m: RemovedGroupMembership) => `${m.userName} in ${m.groupName}`;

/**
 * The audit records of memberships removed with their group or with their user (one
 * each, as for a delete), written by the transaction that removed them: a group's
 * delete, a user's deactivation (or delete) or demotion to end user (only agents and
 * admins are members, as in Zendesk).
 */
export function membershipsRemovedEntries(removed: readonly RemovedGroupMembership[], why: string): AuditEntry[] {
  return removed.map((m) => ({ action: 'destroy', sourceType: 'group_membership', sourceId: m.id, sourceLabel: label(m), description: `Removed: ${why}` }));
}

/**
 * Group memberships of an account (docs/api.md, "Group memberships"): which agents
 * a group routes to. Agents read them, admins write them; every change is audited in
 * its transaction.
 */
export class GroupMembershipService {
  constructor(
    private readonly db: Transactions,
    private readonly memberships: GroupMembershipRepository,
    private readonly groups: GroupRepository,
    private readonly users: UserRepository,
    private readonly repos: RepositoryFactory,
  ) {}

  async find(acting: Acting, rawId: unknown): Promise<GroupMembershipRecord | null> {
    const id = parseId(rawId);
    return id === null ? null : this.memberships.find(scopeOf(acting), id);
  }

  /** One page of the account's memberships, or a group's or a user's (NotFound when the account has no such group or user), id ascending. */
  async list(acting: Acting, filter: GroupMembershipListFilter, page: OffsetPage): Promise<GroupMembershipRecord[]> {
    checkOffsetPage(page);
    return this.memberships.list(scopeOf(acting), await this.filterOf(acting, filter), page);
  }

  async count(acting: Acting, filter: GroupMembershipListFilter): Promise<number> {
    return this.memberships.count(scopeOf(acting), await this.filterOf(acting, filter));
  }

  /** Adds an active agent or admin of the account to a group of the account; a pair that is a member already is 422. */
  async create(acting: Acting, input: GroupMembershipInput): Promise<GroupMembershipRecord> {
    const v = new Validator();
    const userId = idField(v, 'user_id', 'User', input.userId);
    const groupId = idField(v, 'group_id', 'Group', input.groupId);
    v.throwIfAny();
    const scope = scopeOf(acting);
    return tenantTransaction(this.db, async (sql) => {
      const tx = this.repos(sql);
      // the user locked: a deactivation or demotion running now waits, then removes this membership too
      const user = (await tx.users.lock(scope, userId!))?.user;
      const group = await tx.groups.find(scope, groupId!, true);
      if (!user) v.add('user_id', 'NotFound', `User: ${userId} not found`);
      else if (user.role === 'end_user') v.add('user_id', 'InvalidValue', 'User: must be an agent or an admin');
      else if (!user.active) v.add('user_id', 'InvalidValue', 'User: is deactivated');
      if (!group) v.add('group_id', 'NotFound', `Group: ${groupId} not found`);
      v.throwIfAny();
      const membership = await tx.groupMemberships.insert(scope, { userId: userId!, groupId: groupId! });
      if (!membership) {
        v.add('user_id', 'InvalidValue', 'User: is already a member of this group');
        v.throwIfAny();
      }
      await recordAudit(sql, auditActorOf(acting), {
        action: 'create', sourceType: 'group_membership', sourceId: membership!.id, sourceLabel: `${user!.name} in ${group!.name}`,
        changedFields: ['user_id', 'group_id'], description: `Added user ${user!.id} to group ${group!.id}`,
      });
      return membership!;
    });
  }

  /** Removes the user from the group (the user and the group stay). */
  async delete(acting: Acting, rawId: unknown): Promise<void> {
    const id = parseId(rawId) ?? notFound();
    await tenantTransaction(this.db, async (sql) => {
      const deleted = (await this.repos(sql).groupMemberships.delete(scopeOf(acting), id)) ?? notFound();
      await recordAudit(sql, auditActorOf(acting), {
        action: 'destroy', sourceType: 'group_membership', sourceId: id, sourceLabel: label(deleted),
        description: `Removed user ${deleted.userId} from group ${deleted.groupId}`,
      });
    });
  }

  /** The repository's filter of a list: the group and the user, when given, must be of the account (else NotFound). */
  private async filterOf(acting: Acting, filter: GroupMembershipListFilter): Promise<GroupMembershipFilter> {
    const scope = scopeOf(acting);
    const out: GroupMembershipFilter = {};
    if (filter.groupId !== undefined && filter.groupId !== null) {
      const id = parseId(filter.groupId) ?? notFound();
      if (!(await this.groups.find(scope, id))) notFound();
      out.groupId = id;
    }
    if (filter.userId !== undefined && filter.userId !== null) {
      const id = parseId(filter.userId) ?? notFound();
      if (!(await this.users.find(scope, id))) notFound();
      out.userId = id;
    }
    return out;
  }
}

function notFound(): never {
  throw new NotFoundError();
}
