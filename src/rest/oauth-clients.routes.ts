import {
  RestCreateOAuthClientDocument,
  RestDeleteOAuthClientDocument,
  RestGenerateOAuthClientSecretDocument,
  RestListOAuthClientsDocument,
  RestShowOAuthClientDocument,
  RestUpdateOAuthClientDocument,
  type RestOAuthClientFragment,
} from '../generated/graphql';
import { MUST_BE, NotFoundError, ValidationError } from '../domain/errors';
import { defineRoute, SHOWS_SECRET, type AnyRestRoute } from './adapter';
import { isoSeconds, pickFields, unwrap } from './body';

/** Zendesk's OAuth client JSON (API.md §5). */
export function serializeOAuthClient(c: RestOAuthClientFragment) {
  return {
    id: Number(c.id),
    name: c.name,
    company: c.company ?? null,
    client_identifier: c.clientIdentifier,
    client_secret: c.clientSecret,
    client_type: c.clientType.toLowerCase(),
    redirect_uris: c.redirectUris.join(' '),
    scopes: c.scopes,
    agent_id: c.agentId === null || c.agentId === undefined ? null : Number(c.agentId),
    create_date: isoSeconds(c.createDate),
    update_date: isoSeconds(c.updateDate),
  };
}

const CLIENT_FIELDS = {
  name: { kind: 'string', label: 'Name', to: 'name' },
  company: { kind: 'string', label: 'Company', to: 'company' },
  client_type: {
    kind: 'enum', label: 'Client type', to: 'clientType',
    values: { public: 'PUBLIC', confidential: 'CONFIDENTIAL' }, message: MUST_BE.clientType,
  },
  scopes: { kind: 'string', label: 'Scopes', to: 'scopes' },
  redirect_uris: { kind: 'strings', label: 'Redirect uris', to: 'redirectUris' },
} as const;

function gracePeriod(body: Record<string, unknown> | undefined): number | null {
  const raw = unwrap(body, 'client').grace_period;
  if (raw === undefined || raw === null) return null;
  if (!Number.isSafeInteger(raw) || (raw as number) < 0 || (raw as number) > 2_147_483_647) {
    throw new ValidationError({ grace_period: [{ error: 'InvalidValue', description: 'Grace period: must be an integer number of seconds from 0 to 604800' }] });
  }
  return raw as number;
}

/** Flat (seed) or wrapped in {"client": {...}} (Support API style). */
const clientInput = (body: Record<string, unknown> | undefined) => pickFields(unwrap(body, 'client'), CLIENT_FIELDS);

export const oauthClientRoutes: AnyRestRoute[] = [
  defineRoute({
    method: 'GET',
    paths: ['/oauth/clients'],
    document: RestListOAuthClientsDocument,
    variables: () => ({}),
    respond: (data) => ({ status: 200, body: data.oauthClients.map(serializeOAuthClient) }),
  }),
  defineRoute({
    method: 'GET',
    paths: ['/oauth/clients/:id'],
    document: RestShowOAuthClientDocument,
    variables: (req) => ({ id: req.params.id }),
    respond: (data) => {
      if (!data.oauthClient) throw new NotFoundError();
      return { status: 200, body: serializeOAuthClient(data.oauthClient) };
    },
  }),
  defineRoute({
    method: 'POST',
    paths: ['/oauth/clients'],
    document: RestCreateOAuthClientDocument,
    variables: (req) => ({ input: clientInput(req.body) }),
    respond: (data, req) => ({
      status: 201,
      body: serializeOAuthClient(data.createOAuthClient),
      headers: { location: `${req.baseUrl}/api/v2/oauth/clients/${data.createOAuthClient.id}.json`, ...SHOWS_SECRET },
    }),
  }),
  defineRoute({
    method: 'PUT',
    paths: ['/oauth/clients/:id'],
    document: RestUpdateOAuthClientDocument,
    variables: (req) => ({ id: req.params.id, input: clientInput(req.body) }),
    respond: (data) => ({ status: 200, body: serializeOAuthClient(data.updateOAuthClient) }),
  }),
  defineRoute({
    method: 'DELETE',
    paths: ['/oauth/clients/:id'],
    document: RestDeleteOAuthClientDocument,
    variables: (req) => ({ id: req.params.id }),
    respond: () => ({ status: 204 }),
  }),
  defineRoute({
    method: 'POST',
    paths: ['/oauth/clients/:id', '/oauth/clients/:id/client_secret'],
    document: RestGenerateOAuthClientSecretDocument,
    // optional {"grace_period": <seconds>} (flat or in {"client": …}): the previous secret stays valid at the grant endpoints until then
    variables: (req) => ({ id: req.params.id, gracePeriod: gracePeriod(req.body) }),
    respond: (data) => ({ status: 200, body: { client_secret: data.generateOAuthClientSecret.clientSecret }, headers: SHOWS_SECRET }),
  }),
];
