import type { Db } from '../../src/db/create-db';
import { EVENT_NAMES, eventType } from '../../src/domain/events/event-types';

/** Every event type (zen:event-type:…), as a webhook subscribes to them. */
export const ALL_EVENT_TYPES = EVENT_NAMES.map(eventType);

/**
 * A webhook row of the account subscribed to `types` (docs/api.md, "Webhook deliveries": an
 * event gets its event.published job only when an active webhook of its account subscribes to
 * its type). Its endpoint is never reached where no job engine runs; the secret is not sealed.
 */
export async function insertWebhook(sql: Db['sql'], accountId: bigint, types: readonly string[] = ALL_EVENT_TYPES, status: 'active' | 'inactive' = 'active'): Promise<void> {
  await sql(
    `INSERT INTO webhooks (account_id, name, endpoint, http_method, request_format, status, subscriptions, signing_secret)
     VALUES ($1, 'Test hook', 'https://hooks.example.com/test', 'POST', 'json', $2, $3, 'sealed')`,
    [String(accountId), status, types],
  );
}
