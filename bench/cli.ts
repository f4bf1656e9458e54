// The command line of the benchmark's parts run on their own (`npm run bench:events`,
// `bench:voice`, `bench:retention`, `bench:scaling`): one reading of their options and one
// way to run them to an exit code, so that each part's file holds only its measurements.
//
//   --quick | --smoke     the mode (full by default): each part's presets say what it means
//   --out DIR             where the report goes (default bench/results)
//   --only a,b            the part's measurements to run, by name (a part without named measurements refuses it)
import path from 'node:path';
import { cleanupSync } from './processes';

const ROOT = path.resolve(__dirname, '../..');

/** full: the committed results; quick: a few minutes; smoke: tiny data, judges nothing (CI's bench smoke test). */
export type BenchMode = 'full' | 'quick' | 'smoke';

export interface BenchArgs<P extends string> {
  mode: BenchMode;
  out: string;
  /** --only: the measurements named (absent: all of them) */
  only?: Set<P>;
}

/** The mode, the output folder and --only (checked against `parts`, the part's measurements). */
export function benchArgs<P extends string>(argv: string[], parts: readonly P[] = []): BenchArgs<P> {
  const mode: BenchMode = argv.includes('--smoke') ? 'smoke' : argv.includes('--quick') ? 'quick' : 'full';
  const value = (name: string): string | undefined => {
    const i = argv.indexOf(`--${name}`);
    if (i >= 0) {
      const next = argv[i + 1];
      if (next === undefined || next.startsWith('--')) throw new Error(`--${name} needs a value`);
      return next;
    }
    return argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  };
  const out = path.resolve(value('out') ?? path.join(ROOT, 'bench/results'));
  const only = value('only')?.split(',').map((p) => p.trim()).filter(Boolean);
  if (only === undefined) return { mode, out };
  if (!parts.length) throw new Error('--only: this benchmark has no parts to choose from');
  const unknown = only.filter((p) => !(parts as readonly string[]).includes(p));
  if (unknown.length || !only.length) throw new Error(`--only takes ${parts.join(', ')} (separated by commas), got "${unknown.join() || value('only')}"`);
  return { mode, out, only: new Set(only as P[]) };
}

/**
 * Runs a part as a program (`node dist/bench/<name>.js …`): its arguments read by benchArgs,
 * its lines prefixed with its name and the seconds since it began; exit 0 when it resolves,
 * 1 with the error when it fails; every process it started is stopped either way.
 */
export function benchMain<P extends string>(name: string, parts: readonly P[], run: (args: BenchArgs<P>, log: (line: string) => void) => Promise<unknown>): void {
  const t0 = Date.now();
  const log = (line: string) => console.log(`[${name} ${((Date.now() - t0) / 1000).toFixed(0).padStart(3)}s] ${line}`);
  // (the arguments are read inside the promise: a bad one fails like the run does, with its message)
  Promise.resolve()
    .then(() => run(benchArgs(process.argv.slice(2), parts), log))
    .then(
      () => {
        cleanupSync();
        process.exit(0);
      },
      (err) => {
        console.error(`bench:${name} failed: ${err instanceof Error ? err.stack : String(err)}`);
        cleanupSync();
        process.exit(1);
      },
    );
}
