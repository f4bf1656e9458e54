import { tenantTransaction } from '../../db/tenant-sql';
import type { RepositoryFactory, Transactions } from '../repositories';
import { recordAudit, systemActor } from '../audit/audit-log.repository';
import type { AccountScope } from '../authorization';
import type { RequestOrigin } from '../auth/viewer';
import { NotFoundError, ValidationError, Validator } from '../errors';
import { auditActorOf, booleanField, changedFields, scopeOf, textField, type Acting } from './acting';
import type { AccountRepository, AccountRecord, AccountSettingsChanges } from './account.repository';

export type { AccountRecord } from './account.repository';

/** An account's subdomain: one DNS label, lower case (the accounts_subdomain_format check of the database). */
export const SUBDOMAIN_PATTERN = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

export interface AccountSettingsInput {
  omnichannelRouting?: unknown;
  callbackOfferTimeout?: unknown;
  callbackRetryDelay?: unknown;
  callbackMaxAttempts?: unknown;
  wrapUpTime?: unknown;
  apiTokenAccess?: unknown;
}

/** The callback lifecycle's integer settings: input key, REST name, words, range (docs/api.md, "Account settings"). */
const INTEGER_SETTINGS = [
  { key: 'callbackOfferTimeout', field: 'callback_offer_timeout', label: 'Callback offer timeout', min: 1, max: 600 },
  { key: 'callbackRetryDelay', field: 'callback_retry_delay', label: 'Callback retry delay', min: 0, max: 86_400 },
  { key: 'callbackMaxAttempts', field: 'callback_max_attempts', label: 'Callback max attempts', min: 1, max: 10 },
  { key: 'wrapUpTime', field: 'wrap_up_time', label: 'Wrap-up time', min: 0, max: 3_600 },
] as const;

function integerSetting(v: Validator, s: (typeof INTEGER_SETTINGS)[number], raw: unknown): number | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw !== 'number' || !Number.isInteger(raw) || raw < s.min || raw > s.max) {
    v.add(s.field, 'InvalidValue', `${s.label}: must be a whole number from ${s.min} to ${s.max}`);
    return undefined;
  }
  return raw;
}

/** Accounts (tenants): created and listed by the operator (CLI); their settings read and written by admins. */
export class AccountService {
  constructor(
    private readonly db: Transactions,
    private readonly accounts: AccountRepository,
    private readonly repos: RepositoryFactory,
  ) {}

  /** The account a request acts in (or a known account: the authorization pages). */
  find(scope: AccountScope): Promise<AccountRecord | null> {
    return this.accounts.find(scope);
  }

  findByName(name: string): Promise<AccountRecord | null> {
    return this.accounts.findByName(name);
  }

  /** Every account, id ascending (the CLI). */
  list(): Promise<AccountRecord[]> {
    return this.accounts.list();
  }

  /**
   * A new account (the operator's). Without a subdomain, the database derives
   * one from the name (its slug, with the id appended when taken:
   * prisma/functions/account_subdomain_for.sql).
   */
  async create(name: string, subdomain?: string, origin: RequestOrigin = { via: 'cli' }): Promise<AccountRecord> {
    const v = new Validator();
    const trimmed = textField(v, 'name', 'Name', name, { required: true, max: 255 });
    const sub = subdomain?.trim().toLowerCase();
    if (sub !== undefined) {
      if (!sub) v.add('subdomain', 'BlankValue', 'Subdomain: cannot be blank');
      else if (sub.length > 63) v.add('subdomain', 'TooLong', 'Subdomain: is too long (maximum is 63 characters)');
      else if (!SUBDOMAIN_PATTERN.test(sub)) {
        v.add('subdomain', 'InvalidValue', `Subdomain: ${sub} must be letters a-z, digits and "-", neither first nor last`);
      }
    }
    v.throwIfAny();
    return tenantTransaction(this.db, async (sql) => {
      const accounts = this.repos(sql).accounts;
      const account = await accounts.insert({ name: trimmed!, subdomain: sub });
      if (!account) {
        if (sub !== undefined && !(await accounts.findByName(trimmed!))) {
          throw new ValidationError({ subdomain: [{ error: 'InvalidValue', description: `Subdomain: ${sub} is already taken` }] });
        }
        throw new ValidationError({ name: [{ error: 'InvalidValue', description: `Name: ${trimmed} is already taken` }] });
      }
      await recordAudit(sql, systemActor(account.id, origin), {
        action: 'create', sourceType: 'account', sourceId: account.id, sourceLabel: account.name, changedFields: ['name', 'subdomain'],
        description: `Created with subdomain ${account.subdomain}`,
      });
      return account;
    });
  }

  /** The acting account's settings (admins; the CLI for any account). */
  async settings(acting: Acting): Promise<AccountRecord> {
    return (await this.accounts.find(scopeOf(acting))) ?? notFound();
  }

  async updateSettings(acting: Acting, input: AccountSettingsInput): Promise<AccountRecord> {
    const v = new Validator();
    // (null is refused as any other non-boolean: a setting is never unset)
    const changes: AccountSettingsChanges = { omnichannelRouting: booleanField(v, 'omnichannel_routing', 'Omnichannel routing', input.omnichannelRouting) };
    for (const s of INTEGER_SETTINGS) changes[s.key] = integerSetting(v, s, input[s.key]);
    changes.apiTokenAccess = booleanField(v, 'api_token_access', 'Api token access', input.apiTokenAccess);
    v.throwIfAny();
    return tenantTransaction(this.db, async (sql) => {
      const accounts = this.repos(sql).accounts;
      const current = (await accounts.find(scopeOf(acting), true)) ?? notFound();
      const changed = changedFields(current, changes, {
        omnichannel_routing: 'omnichannelRouting', callback_offer_timeout: 'callbackOfferTimeout', callback_retry_delay: 'callbackRetryDelay',
        callback_max_attempts: 'callbackMaxAttempts', wrap_up_time: 'wrapUpTime', api_token_access: 'apiTokenAccess',
      });
      if (changed.length === 0) return current;
      const updated = (await accounts.updateSettings(scopeOf(acting), changes)) ?? notFound();
      await recordAudit(sql, auditActorOf(acting), {
        action: 'update', sourceType: 'account', sourceId: updated.id, sourceLabel: updated.name, changedFields: changed,
        description: changed.includes('omnichannel_routing') && changed.length === 1
          ? `Omnichannel routing turned ${updated.omnichannelRouting ? 'on' : 'off'}`
          : `Updated ${changed.join(', ')}`,
      });
      return updated;
    });
  }
}

function notFound(): never {
  throw new NotFoundError();
}
