// The operation people start from in the GraphQL explorers (Apollo Sandbox on
// GET /graphql, GraphiQL on /graphiql): one text for both, checked against the
// schema by test/graphiql.test.ts.

/** What the explorers put in the Authorization header until the person replaces it. */
export const TOKEN_PLACEHOLDER = '<token>';

/** The headers the explorers start with: a template to fill in, never sent as it is by GraphiQL. */
export const EXAMPLE_HEADERS: Readonly<Record<string, string>> = { Authorization: `Bearer ${TOKEN_PLACEHOLDER}` };

export const EXAMPLE_DOCUMENT = `# Every operation needs credentials.
# In Headers (below), replace ${TOKEN_PLACEHOLDER}
# with an OAuth access token, or use
# Basic base64(email:password).
# A token: an admin creates one with
# createOAuthToken (or POST
# /api/v2/oauth/tokens); an app gets
# one from POST /oauth/tokens.
# oauthTokens lists tokens: admins.
# docs/graphql.md has more examples.
query Me {
  me {
    id
    name
    email
    role
    authenticatedVia
    account {
      name
    }
  }
  oauthTokens(first: 10) {
    totalCount
    edges {
      node {
        id
        token
        scopes
        createdAt
        expiresAt
        usedAt
        client {
          name
        }
      }
    }
  }
}
`;
