import type { TestContext } from './test-app';

export interface AuditRow {
  action: string;
  source_type: string;
  source_id: string;
  source_label: string;
  changed_fields: string[];
  change_description: string;
  actor_id: string | null;
  actor_name: string;
  via: string;
  request_id: string | null;
  account_id: string;
}

/** The audit records of one record, oldest first (ids as strings). */
export async function auditOf(ctx: TestContext, sourceType: string, sourceId: bigint | number | string): Promise<AuditRow[]> {
  return ctx.db.sql<AuditRow>(
    `SELECT action, source_type, source_id::text AS source_id, source_label, changed_fields, change_description, actor_id::text AS actor_id,
            actor_name, via, request_id, account_id::text AS account_id
       FROM audit_logs WHERE source_type = $1 AND source_id = $2 ORDER BY id`,
    [sourceType, String(sourceId)],
  );
}
