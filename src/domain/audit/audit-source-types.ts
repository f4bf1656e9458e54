// The kinds of record the audit log speaks of: declared here once. The
// repository's type, the GraphQL enum AuditLogSourceType (upper-case names),
// REST's `source_type` values and filter, and the audit_logs.source_type column
// (text) all take them from this list, in this order.

export const AUDIT_SOURCE_TYPES = ['account', 'user', 'group', 'voice_phone_number', 'oauth_client', 'oauth_token', 'webhook', 'group_membership', 'callback_request', 'api_token'] as const;

export type AuditSourceType = (typeof AUDIT_SOURCE_TYPES)[number];

/** Each type under its upper-case name ({ OAUTH_TOKEN: 'oauth_token', … }), as GraphQL enums are written. */
export const AUDIT_SOURCE_TYPES_BY_NAME = Object.fromEntries(AUDIT_SOURCE_TYPES.map((t) => [t.toUpperCase(), t])) as {
  [T in AuditSourceType as Uppercase<T>]: T;
};
