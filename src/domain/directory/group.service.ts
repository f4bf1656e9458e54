import { tenantTransaction } from '../../db/tenant-sql';
import type { RepositoryFactory, Transactions } from '../repositories';
import { recordAudit } from '../audit/audit-log.repository';
import { NotFoundError, Validator } from '../errors';
import { parseId } from '../ids';
import { checkOffsetPage, type OffsetPage } from '../pagination';
import { auditActorOf, changedFields, scopeOf, textField, type Acting } from './acting';
import type { GroupChanges, GroupRecord, GroupRepository } from './group.repository';
import { membershipsRemovedEntries } from '../voice/group-membership.service';

export type { GroupRecord } from './group.repository';

const GROUP_DESCRIPTION_MAX = 1000;

export interface GroupInput {
  name?: unknown;
  description?: unknown;
}

function validate(input: GroupInput, creating: boolean): GroupChanges {
  const v = new Validator();
  const name = textField(v, 'name', 'Name', input.name, { required: creating || input.name !== undefined, max: 255 });
  // null or "" is no description
  const description = textField(v, 'description', 'Description', input.description, { required: false, nullable: true, max: GROUP_DESCRIPTION_MAX });
  v.throwIfAny();
  return { name: name ?? undefined, description: description === null ? '' : description };
}

/** Groups of an account (docs/api.md, "Groups"): agents read them, admins write them. Every change is audited in its transaction. */
export class GroupService {
  constructor(
    private readonly db: Transactions,
    private readonly groups: GroupRepository,
    private readonly repos: RepositoryFactory,
  ) {}

  async find(acting: Acting, rawId: unknown): Promise<GroupRecord | null> {
    const id = parseId(rawId);
    return id === null ? null : this.groups.find(scopeOf(acting), id);
  }

  list(acting: Acting, page: OffsetPage): Promise<GroupRecord[]> {
    checkOffsetPage(page);
    return this.groups.list(scopeOf(acting), page);
  }

  count(acting: Acting): Promise<number> {
    return this.groups.count(scopeOf(acting));
  }

  create(acting: Acting, input: GroupInput): Promise<GroupRecord> {
    const fields = validate(input, true);
    return tenantTransaction(this.db, async (sql) => {
      const group = await this.repos(sql).groups.insert(scopeOf(acting), { name: fields.name!, description: fields.description ?? '' });
      await recordAudit(sql, auditActorOf(acting), {
        action: 'create', sourceType: 'group', sourceId: group.id, sourceLabel: group.name,
        changedFields: ['name', ...(group.description ? ['description'] : [])], description: 'Created',
      });
      return group;
    });
  }

  async update(acting: Acting, rawId: unknown, input: GroupInput): Promise<GroupRecord> {
    const id = parseId(rawId) ?? notFound();
    const changes = validate(input, false);
    return tenantTransaction(this.db, async (sql) => {
      const groups = this.repos(sql).groups;
      const current = (await groups.find(scopeOf(acting), id, true)) ?? notFound();
      const changed = changedFields(current, changes, { name: 'name', description: 'description' });
      if (changed.length === 0) return current;
      const updated = (await groups.update(scopeOf(acting), id, changes)) ?? notFound();
      await recordAudit(sql, auditActorOf(acting), {
        action: 'update', sourceType: 'group', sourceId: id, sourceLabel: updated.name, changedFields: changed, description: `Updated ${changed.join(', ')}`,
      });
      return updated;
    });
  }

  /**
   * Deletes the group for good, and its memberships with it (each audited); callback
   * requests keep the group ids they were created with.
   */
  async delete(acting: Acting, rawId: unknown): Promise<void> {
    const id = parseId(rawId) ?? notFound();
    const scope = scopeOf(acting);
    await tenantTransaction(this.db, async (sql) => {
      const tx = this.repos(sql);
      // locked first: a membership being added now waits, then finds no group
      if (!(await tx.groups.find(scope, id, true))) notFound();
      const removed = await tx.groupMemberships.deleteOf(scope, { groupId: id });
      const deleted = (await tx.groups.delete(scope, id)) ?? notFound();
      await recordAudit(sql, auditActorOf(acting), [
        { action: 'destroy', sourceType: 'group', sourceId: id, sourceLabel: deleted.name, description: 'Deleted' },
        ...membershipsRemovedEntries(removed, 'the group was deleted'),
      ]);
    });
  }
}

function notFound(): never {
  throw new NotFoundError();
}
