import { eventCtes } from '../events/event-log.repository';
import { tokenDetailSql } from '../events/event-details';

// The events of the statements that create or revoke tokens (docs/api.md,
// "Events"), written beside their audit records (auditCte) in the same
// statement: one event per row of the CTE that holds the tokens.

/** oauth_token.created for each token of CTE `cte`; `rotated`: the CTE of the token a refresh rotation replaced (one row). */
export function tokenCreated(cte: string, rotated?: string): string {
  const from = rotated ? `${cte} CROSS JOIN ${rotated}` : cte;
  const event = rotated ? `jsonb_build_object('rotated_token_id', ${rotated}.id)` : undefined;
  return eventCtes('created_event', from, 'oauth_token.created', 'oauth_token', { accountId: `${cte}.account_id`, subjectId: `${cte}.id`, detail: tokenDetailSql(cte), event });
}

/** oauth_token.revoked for each token of CTE `cte`. */
export function tokenRevoked(cte: string): string {
  return eventCtes('revoked_event', cte, 'oauth_token.revoked', 'oauth_token', { accountId: `${cte}.account_id`, subjectId: `${cte}.id`, detail: tokenDetailSql(cte) });
}
