import { tenantTransaction } from '../../db/tenant-sql';
import type { RepositoryFactory, Transactions } from '../repositories';
import { recordAudit } from '../audit/audit-log.repository';
import { NotFoundError, ValidationError, Validator } from '../errors';
import { parseId } from '../ids';
import { checkOffsetPage, type OffsetPage } from '../pagination';
import { toE164 } from '../phone';
import { auditActorOf, booleanField, changedFields, scopeOf, textField, type Acting } from './acting';
import type { CallbackLifecycleService } from '../voice/callback-lifecycle.service';
import type { PhoneNumberChanges, PhoneNumberRecord, PhoneNumberRepository } from './phone-number.repository';

export type { PhoneNumberRecord } from './phone-number.repository';

export interface PhoneNumberInput {
  /** required on create, read-only afterwards (ignored on update) */
  number?: unknown;
  nickname?: unknown;
  callbackEnabled?: unknown;
  capabilities?: { voice?: unknown; sms?: unknown; mms?: unknown } | null;
}

/** REST names (the audit log's changed_fields) → record keys */
const FIELD_NAMES = {
  nickname: 'nickname',
  callback_enabled: 'callbackEnabled',
  'capabilities.voice': 'voiceEnabled',
  'capabilities.sms': 'smsEnabled',
  'capabilities.mms': 'mmsEnabled',
} as const;

function validate(input: PhoneNumberInput, v: Validator): PhoneNumberChanges {
  const nickname = textField(v, 'nickname', 'Nickname', input.nickname, { required: false, nullable: true, max: 255 });
  const flag = (raw: unknown, field: string, label: string) =>
    raw === null ? (v.add(field, 'InvalidValue', `${label}: must be true or false`), undefined) : booleanField(v, field, label, raw);
  const caps = input.capabilities;
  if (caps === null) v.add('capabilities', 'InvalidValue', 'Capabilities: must be an object of voice, sms and mms flags');
  return {
    nickname: nickname === '' ? null : nickname,
    callbackEnabled: flag(input.callbackEnabled, 'callback_enabled', 'Callback enabled'),
    voiceEnabled: caps ? flag(caps.voice, 'capabilities', 'Capabilities: voice') : undefined,
    smsEnabled: caps ? flag(caps.sms, 'capabilities', 'Capabilities: sms') : undefined,
    mmsEnabled: caps ? flag(caps.mms, 'capabilities', 'Capabilities: mms') : undefined,
  };
}

/**
 * Voice phone numbers of an account (docs/api.md, "Voice phone numbers"): agents read
 * them, admins write them. Deleting is a soft delete that cancels the number's
 * open callback requests; creating the same number again brings it back.
 */
export class PhoneNumberService {
  constructor(
    private readonly db: Transactions,
    private readonly numbers: PhoneNumberRepository,
    private readonly repos: RepositoryFactory,
    /** the callback lifecycle: deleting a number cancels its open requests */
    private readonly callbacks: Pick<CallbackLifecycleService, 'cancelOpenOfPhoneNumber'>,
  ) {}

  async find(acting: Acting, rawId: unknown): Promise<PhoneNumberRecord | null> {
    const id = parseId(rawId);
    return id === null ? null : this.numbers.find(scopeOf(acting), id);
  }

  list(acting: Acting, page: OffsetPage): Promise<PhoneNumberRecord[]> {
    checkOffsetPage(page);
    return this.numbers.list(scopeOf(acting), page);
  }

  count(acting: Acting): Promise<number> {
    return this.numbers.count(scopeOf(acting));
  }

  create(acting: Acting, input: PhoneNumberInput): Promise<PhoneNumberRecord> {
    const v = new Validator();
    const raw = textField(v, 'number', 'Number', input.number, { required: true, max: 32 });
    const number = raw ? toE164(raw) : null;
    if (raw && !number) v.add('number', 'InvalidValue', `Number: ${raw} is not a valid E.164 phone number`);
    const fields = validate(input, v);
    v.throwIfAny();
    return tenantTransaction(this.db, async (sql) => {
      const stored = await this.repos(sql).phoneNumbers.insertOrRevive(scopeOf(acting), {
        number: number!,
        nickname: fields.nickname ?? null,
        callbackEnabled: fields.callbackEnabled ?? false,
        voiceEnabled: fields.voiceEnabled ?? true,
        smsEnabled: fields.smsEnabled ?? false,
        mmsEnabled: fields.mmsEnabled ?? false,
      });
      if (!stored) throw new ValidationError({ number: [{ error: 'InvalidValue', description: `Number: ${number} already exists in this account` }] });
      const { record, revived } = stored;
      await recordAudit(sql, auditActorOf(acting), {
        action: 'create', sourceType: 'voice_phone_number', sourceId: record.id, sourceLabel: record.number,
        changedFields: ['number', ...Object.keys(FIELD_NAMES).filter((f) => f !== 'nickname' || record.nickname !== null)],
        description: revived ? 'Created again (the deleted number is back, with its id)' : 'Created',
      });
      return record;
    });
  }

  /** A partial update; the number itself is read-only (ignored). */
  async update(acting: Acting, rawId: unknown, input: PhoneNumberInput): Promise<PhoneNumberRecord> {
    const id = parseId(rawId) ?? notFound();
    const v = new Validator();
    const changes = validate(input, v);
    v.throwIfAny();
    return tenantTransaction(this.db, async (sql) => {
      const numbers = this.repos(sql).phoneNumbers;
      const current = (await numbers.find(scopeOf(acting), id, true)) ?? notFound();
      const changed = changedFields(current, changes, FIELD_NAMES);
      if (changed.length === 0) return current;
      const updated = (await numbers.update(scopeOf(acting), id, changes)) ?? notFound();
      await recordAudit(sql, auditActorOf(acting), {
        action: 'update', sourceType: 'voice_phone_number', sourceId: id, sourceLabel: updated.number, changedFields: changed,
        description: `Updated ${changed.join(', ')}`,
      });
      return updated;
    });
  }

  /** Soft delete; its open callback requests become cancelled in the same transaction (their agents freed). */
  async delete(acting: Acting, rawId: unknown): Promise<void> {
    const id = parseId(rawId) ?? notFound();
    await tenantTransaction(this.db, async (sql) => {
      const tx = this.repos(sql);
      const deleted = (await tx.phoneNumbers.softDelete(scopeOf(acting), id)) ?? notFound();
      const cancelled = await this.callbacks.cancelOpenOfPhoneNumber(sql, auditActorOf(acting), id);
      await recordAudit(sql, auditActorOf(acting), {
        action: 'destroy', sourceType: 'voice_phone_number', sourceId: id, sourceLabel: deleted.number,
        description: `Deleted; ${cancelled} open callback request${cancelled === 1 ? '' : 's'} cancelled`,
      });
    });
  }
}

function notFound(): never {
  throw new NotFoundError();
}
