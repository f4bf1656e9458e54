import {
  RestCreatePhoneNumberDocument,
  RestDeletePhoneNumberDocument,
  RestListPhoneNumbersDocument,
  RestShowPhoneNumberDocument,
  RestUpdatePhoneNumberDocument,
  type RestPhoneNumberFragment,
} from '../generated/graphql';
import { NotFoundError } from '../domain/errors';
import { defineRoute, type AnyRestRoute } from './adapter';
import { isoSeconds, pickFields, unwrap } from './body';
import { offsetFields, offsetVariables } from './pagination';

/** Zendesk's voice phone number JSON (API.md "Voice phone numbers"). */
export function serializePhoneNumber(p: RestPhoneNumberFragment) {
  return {
    id: Number(p.id),
    url: p.url,
    number: p.number,
    display_number: p.displayNumber,
    nickname: p.nickname ?? null,
    country_code: p.countryCode ?? null,
    capabilities: { voice: p.capabilities.voice, sms: p.capabilities.sms, mms: p.capabilities.mms },
    callback_enabled: p.callbackEnabled,
    created_at: isoSeconds(p.createdAt),
    updated_at: isoSeconds(p.updatedAt),
  };
}

/** {"phone_number": {...}} (or flat); `number` is read by create only (update ignores it: read-only). */
const PHONE_NUMBER_FIELDS = {
  number: { kind: 'string', label: 'Number', to: 'number' },
  nickname: { kind: 'string', label: 'Nickname', to: 'nickname' },
  callback_enabled: { kind: 'boolean', label: 'Callback enabled', to: 'callbackEnabled' },
  capabilities: { kind: 'flags', label: 'Capabilities', keys: ['voice', 'sms', 'mms'], to: 'capabilities' },
} as const;
const { number: _readOnly, ...UPDATE_FIELDS } = PHONE_NUMBER_FIELDS;

const BASE = '/channels/voice/phone_numbers';

export const phoneNumberRoutes: AnyRestRoute[] = [
  defineRoute({
    method: 'GET',
    paths: [BASE],
    document: RestListPhoneNumbersDocument,
    variables: offsetVariables,
    respond: (data, req) => ({
      status: 200,
      body: { phone_numbers: data.phoneNumbers.map(serializePhoneNumber), ...offsetFields(offsetVariables(req), data.phoneNumberCount, req) },
    }),
  }),
  defineRoute({
    method: 'GET',
    paths: [`${BASE}/:id`],
    document: RestShowPhoneNumberDocument,
    variables: (req) => ({ id: req.params.id }),
    respond: (data) => {
      if (!data.phoneNumber) throw new NotFoundError();
      return { status: 200, body: { phone_number: serializePhoneNumber(data.phoneNumber) } };
    },
  }),
  defineRoute({
    method: 'POST',
    paths: [BASE],
    document: RestCreatePhoneNumberDocument,
    variables: (req) => ({ input: pickFields(unwrap(req.body, 'phone_number'), PHONE_NUMBER_FIELDS) }),
    respond: (data, req) => ({
      status: 201,
      body: { phone_number: serializePhoneNumber(data.createPhoneNumber) },
      headers: { location: `${req.baseUrl}/api/v2${BASE}/${data.createPhoneNumber.id}.json` },
    }),
  }),
  defineRoute({
    method: 'PUT',
    paths: [`${BASE}/:id`],
    document: RestUpdatePhoneNumberDocument,
    variables: (req) => ({ id: req.params.id, input: pickFields(unwrap(req.body, 'phone_number'), UPDATE_FIELDS) }),
    respond: (data) => ({ status: 200, body: { phone_number: serializePhoneNumber(data.updatePhoneNumber) } }),
  }),
  defineRoute({
    method: 'DELETE',
    paths: [`${BASE}/:id`],
    document: RestDeletePhoneNumberDocument,
    variables: (req) => ({ id: req.params.id }),
    respond: () => ({ status: 204 }),
  }),
];
