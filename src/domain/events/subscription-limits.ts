export interface SubscriptionLimits {
  perConnection: number;
  buffer: number;
  recheckSeconds: number;
}

// Limits of live subscriptions (docs/api.md, "Live events").
export const SUBSCRIPTION_LIMITS: Readonly<SubscriptionLimits> = {
  /** operations at once on one connection; the next subscribe is refused */
  perConnection: 10,
  /** events waiting for a slow reader, per subscription; one more closes the connection */
  buffer: 1000,
  /** credentials are checked again before a delivery at least this often (and after any change to the account's tokens, clients or users) */
  recheckSeconds: 60,
};

/** Close codes a session ends with (WebSocket close frames; graphql-ws's own codes are 44xx). */
export const CLOSE = {
  /** the credentials no longer authenticate (token revoked or expired, user deactivated, password changed) */
  unauthorized: { code: 4401, reason: 'Unauthorized: the credentials are no longer valid' },
  /** a subscription's buffer overflowed: the client reads too slowly */
  slowConsumer: { code: 1013, reason: 'Slow consumer: too many undelivered events' },
} as const;

