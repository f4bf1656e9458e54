// Load generator, run as its own process by run.ts: `node dist/bench/load.js <spec.json | '{json}'>`.
// Drives autocannon 9 (programmatic API) and prints one JSON LoadResult line on stdout.
// Latency percentiles come from every 2xx response time (sub-millisecond
// resolution), not from autocannon's integer-millisecond histogram.
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';

export interface RequestVariant {
  path?: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface LoadSpec {
  /** http://host:port */
  origin: string;
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: string;
  /** cycled request after request (tokens, accounts, ids) */
  variants?: RequestVariant[];
  connections: number;
  pipelining: number;
  durationSeconds: number;
  /** requests per second over all connections (fixed-rate load), absent = as fast as possible */
  overallRate?: number;
}

export interface LoadResult {
  /** 2xx responses */
  ok: number;
  /** all responses */
  responses: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  durationSeconds: number;
  /** 2xx per second */
  rps: number;
  p50: number;
  p99: number;
  mean: number;
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return 0;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const variants = spec.variants?.length ? spec.variants : undefined;
  let next = 0;
  let times = new Float64Array(1 << 16);
  let n = 0;
  const statusCodes: Record<string, number> = {};
  let responses = 0;
  const instance = autocannon({
    url: `${spec.origin}${spec.path}`,
    method: spec.method,
    headers: { ...(spec.body !== undefined || variants?.some((v) => v.body) ? { 'content-type': 'application/json' } : {}), ...spec.headers },
    body: spec.body,
    connections: spec.connections,
    pipelining: spec.pipelining,
    duration: spec.durationSeconds,
    ...(spec.overallRate ? { overallRate: spec.overallRate } : {}),
    ...(variants
      ? {
          requests: [
            {
              setupRequest: (req: any) => {
                const v = variants[next++ % variants.length];
                if (v.path) req.path = v.path;
                if (v.headers) req.headers = { ...req.headers, ...v.headers };
                if (v.body !== undefined) req.body = v.body;
                return req;
              },
            },
          ],
        }
      : {}),
  } as any);
  instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
    responses++;
    statusCodes[statusCode] = (statusCodes[statusCode] ?? 0) + 1;
    if (statusCode < 200 || statusCode >= 300) return;
    if (n === times.length) {
      const bigger = new Float64Array(times.length * 2);
      bigger.set(times);
      times = bigger;
    }
    times[n++] = responseTime;
  });
  const result: any = await instance;
  const sorted = times.subarray(0, n).sort();
  let sum = 0;
  for (let i = 0; i < n; i++) sum += sorted[i];
  const duration = Number(result.duration) || spec.durationSeconds;
  return {
    ok: n,
    responses,
    non2xx: responses - n,
    errors: Number(result.errors) || 0,
    timeouts: Number(result.timeouts) || 0,
    statusCodes,
    durationSeconds: duration,
    rps: n / duration,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    mean: n ? sum / n : 0,
  };
}

if (require.main === module) {
  // the spec inline, or the path of a JSON file (long variant lists exceed one argument's limit)
  const arg = process.argv[2] ?? '';
  const spec = JSON.parse(arg.startsWith('{') ? arg : readFileSync(arg, 'utf8')) as LoadSpec;
  runLoad(spec).then(
    (r) => process.stdout.write(`${JSON.stringify(r)}\n`),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
