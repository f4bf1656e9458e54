import { Type } from 'typebox';
import { RestListAuthorizedAppsDocument, RestRevokeAuthorizedAppDocument } from '../generated/graphql';
import { defineRoute, type AnyRestRoute } from './adapter';
import { isoSeconds } from './body';
import { answer, errorResponses, IgnoredBody, NoContent, Nullable, NullableTimestamp, StringEnum, Timestamp } from './schemas';

// A person's own authorized apps (docs/api.md, "Your authorized apps"): every
// role lists and revokes their own, over the GraphQL operations of `me {
// authorizedApps }` and `revokeAuthorizedApp`.

const GRANT_EXAMPLE = {
  id: 'grant-17', kind: 'grant', client: { id: 7, name: 'Dashboard', company: 'Acme' }, scopes: ['read', 'write'],
  granted_at: '2026-11-21T10:29:59Z', last_used_at: '2026-11-22T08:00:00Z',
};

const AuthorizedAppJson = Type.Object(
  {
    id: Type.String({ description: 'grant-<id> for a consent, token-<id> for a token: what DELETE takes' }),
    kind: StringEnum(['grant', 'token'] as const, { description: 'grant: you allowed the app on the consent page; token: a token issued to you outside a consent' }),
    client: Type.Object(
      {
        id: Type.Integer({ description: "The client's id (not its identifier)" }),
        name: Type.String(),
        company: Nullable(Type.String()),
      },
      { additionalProperties: false },
    ),
    scopes: Type.Array(Type.String(), { description: 'The scopes allowed (a consent) or carried (a token)' }),
    granted_at: Timestamp,
    last_used_at: NullableTimestamp,
  },
  { additionalProperties: false, title: 'AuthorizedApp', examples: [GRANT_EXAMPLE] },
);

/** An entry's id in the path: grant-<id> or token-<id> (a `.json` suffix is accepted); anything else → 404. */
const AppIdParams = Type.Object({
  id: Type.String({ pattern: '^(grant|token)-[1-9][0-9]{0,18}$', description: 'grant-<id> or token-<id>, as the list gives it (a `.json` suffix is accepted).' }),
});

const TAGS = ['Authorized apps'];
const PATH = '/users/me/oauth/grants';

export const authorizedAppRoutes: AnyRestRoute[] = [
  defineRoute({
    method: 'GET',
    paths: [PATH],
    document: RestListAuthorizedAppsDocument,
    schema: {
      operationId: 'listAuthorizedApps', summary: 'List your authorized apps', tags: TAGS,
      description:
        'The apps you allowed on the consent page and the tokens issued to you that still work, newest first (granted_at, then id, descending), at most 200. Anyone, their own; a token needs read.',
      response: {
        200: answer(Type.Object({ grants: Type.Array(AuthorizedAppJson) }, { additionalProperties: false, examples: [{ grants: [GRANT_EXAMPLE] }] }), 'Your authorized apps'),
        ...errorResponses(),
      },
    },
    variables: () => ({}),
    respond: (data) => ({
      status: 200,
      body: {
        grants: (data.me.authorizedApps ?? []).map((a) => ({
          id: a.id,
          kind: a.kind === 'GRANT' ? ('grant' as const) : ('token' as const),
          client: { id: Number(a.client.id), name: a.client.name, company: a.client.company ?? null },
          scopes: a.scopes,
          granted_at: isoSeconds(a.grantedAt)!,
          last_used_at: isoSeconds(a.lastUsedAt),
        })),
      },
    }),
  }),
  defineRoute({
    method: 'DELETE',
    paths: [`${PATH}/:id`],
    document: RestRevokeAuthorizedAppDocument,
    schema: {
      operationId: 'revokeAuthorizedApp', summary: 'Revoke one of your authorized apps', tags: TAGS,
      description:
        'A consent is revoked with every access and refresh token it issued; a token entry revokes that token. They fail on the very next request, in every process. Anyone, their own (anything else: 404); a token needs write.',
      params: AppIdParams,
      body: IgnoredBody,
      response: { 204: NoContent('Revoked'), ...errorResponses({ id: true, body: 'ignored' }) },
    },
    variables: (req) => ({ id: req.params.id }),
    respond: () => ({ status: 204 }),
  }),
];
