// Real HTTP for the fault and soak tests: every call is recorded with when it
// started and ended, its status (or why it got no answer) and its parsed body.
import { readFileSync } from 'node:fs';

export interface Outcome {
  kind: string;
  /** ms since the epoch */
  start: number;
  end: number;
  /** HTTP status, or undefined when no answer came */
  status?: number;
  /** why no answer came: ECONNREFUSED, ECONNRESET, UND_ERR_SOCKET, TIMEOUT, ... */
  error?: string;
  contentType?: string;
  headers?: Headers;
  body?: unknown;
}

export interface CallOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: unknown;
  timeoutMs?: number;
}

/** The code of a network failure, from fetch's TypeError and its causes. */
export function networkCode(err: unknown): string {
  let e = err as { name?: string; code?: string; cause?: unknown } | undefined;
  for (let depth = 0; e && depth < 5; depth++) {
    if (e.name === 'TimeoutError' || e.name === 'AbortError') return 'TIMEOUT';
    if (typeof e.code === 'string') return e.code;
    e = e.cause as typeof e;
  }
  return String((err as Error)?.message ?? err);
}

/** One request; never throws: a failure to get an answer is recorded as `error`. */
export async function call(kind: string, url: string, options: CallOptions = {}): Promise<Outcome> {
  const start = Date.now();
  const headers: Record<string, string> = { ...options.headers };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  try {
    const res = await fetch(url, {
      method: options.method ?? 'GET',
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: AbortSignal.timeout(options.timeoutMs ?? 15_000),
    });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      /* not JSON: keep the text */
    }
    return { kind, start, end: Date.now(), status: res.status, contentType: res.headers.get('content-type') ?? undefined, headers: res.headers, body };
  } catch (err) {
    return { kind, start, end: Date.now(), error: networkCode(err) };
  }
}

/** POST /graphql */
export function graphql(kind: string, baseUrl: string, query: string, variables: Record<string, unknown>, headers: Record<string, string>, timeoutMs?: number) {
  return call(kind, `${baseUrl}/graphql`, { method: 'POST', headers, body: { query, variables }, timeoutMs });
}

/** Counts by a key, sorted by key, for reports. */
export function countBy<T>(items: T[], key: (item: T) => string | number): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) {
    const k = String(key(item));
    counts[k] = (counts[k] ?? 0) + 1;
  }
  return Object.fromEntries(Object.entries(counts).sort(([a], [b]) => a.localeCompare(b)));
}

/** "503" for an answer, "no answer: ECONNRESET" otherwise. */
export const statusKey = (o: Outcome): string => (o.status === undefined ? `no answer: ${o.error}` : String(o.status));

/** Resident set size of a process, in KiB (Linux /proc). */
export function rssKiB(pid: number): number | undefined {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Runs `workers` loops of `step` until `stop()` says so; each loop awaits its
 * step, so at most `workers` requests are in flight. Resolves when all loops end.
 */
export async function runWorkers(workers: number, step: (worker: number, iteration: number) => Promise<void>, stop: () => boolean): Promise<void> {
  await Promise.all(
    Array.from({ length: workers }, async (_, worker) => {
      for (let i = 0; !stop(); i++) await step(worker, i);
    }),
  );
}
