import { readdirSync, readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { bindMigrationAwareSqlAdapterFactory } from '@prisma/driver-adapter-utils';
import type { SqlDriverAdapter, SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import { PROJECT_ROOT } from '../project-root';

// Prisma's schema engine compiled to WebAssembly, driven through a driver
// adapter. It does what `prisma migrate deploy` / `prisma migrate diff` do,
// without the native binary, which an offline machine cannot download.

export const PRISMA_DIR = path.join(PROJECT_ROOT, 'prisma');
export const MIGRATIONS_DIR = path.join(PRISMA_DIR, 'migrations');
const SCHEMA_PATH = path.join(PRISMA_DIR, 'schema.prisma');

const NO_FILTERS = { externalTables: [] as string[], externalEnums: [] as string[] };

type EngineModule = typeof import('@prisma/schema-engine-wasm/schema_engine_bg');
let enginePromise: Promise<EngineModule> | undefined;

/**
 * The engine arms a 10 s timer (its advisory-lock timeout) on every
 * applyMigrations and never clears it, which kept every CLI command and
 * `npm run db:migrate` alive for ~10 s after its work was done. The engine only
 * races that timer against real work, so it must not hold the process open.
 */
function withUnrefTimers(bg: EngineModule): Record<string, unknown> {
  const imports: Record<string, unknown> = { ...bg };
  for (const name of Object.keys(imports)) {
    const original = imports[name];
    if (!name.startsWith('__wbg_setTimeout_') || typeof original !== 'function') continue;
    imports[name] = (...args: unknown[]) => {
      const timer = (original as (...a: unknown[]) => unknown)(...args);
      (timer as { unref?: () => void } | undefined)?.unref?.();
      return timer;
    };
  }
  return imports;
}

function loadWasm(): Promise<EngineModule> {
  enginePromise ??= (async () => {
    // A dynamic import of the wasm-bindgen glue, instantiated by hand so that it
    // loads from CommonJS without --experimental-wasm-modules.
    const bg = await import('@prisma/schema-engine-wasm/schema_engine_bg');
    const dir = path.dirname(require.resolve('@prisma/schema-engine-wasm/schema_engine_bg'));
    const bytes = readFileSync(path.join(dir, 'schema_engine_bg.wasm'));
    // (Node has WebAssembly; @types/node does not declare it without the DOM lib.)
    const wasm = (globalThis as unknown as { WebAssembly: { instantiate: (bytes: Buffer, imports: object) => Promise<{ instance: { exports: unknown } }> } }).WebAssembly;
    const { instance } = await wasm.instantiate(bytes, { './schema_engine_bg.js': withUnrefTimers(bg) });
    const exports = instance.exports as { __wbindgen_start: () => void } & Parameters<EngineModule['__wbg_set_wasm']>[0];
    bg.__wbg_set_wasm(exports);
    exports.__wbindgen_start();
    return bg;
  })();
  return enginePromise;
}

export interface MigrationsList {
  baseDir: string;
  lockfile: { path: string; content: string | null };
  shadowDbInitScript: string;
  migrationDirectories: { path: string; migrationFile: { path: string; content: { tag: 'ok'; value: string } } }[];
}

export function readMigrations(dir = MIGRATIONS_DIR): MigrationsList {
  const names = existsSync(dir)
    ? readdirSync(dir, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort()
    : [];
  const lockPath = path.join(dir, 'migration_lock.toml');
  return {
    baseDir: dir,
    lockfile: { path: 'migration_lock.toml', content: existsSync(lockPath) ? readFileSync(lockPath, 'utf8') : null },
    shadowDbInitScript: '',
    migrationDirectories: names.map((name) => ({
      path: name,
      migrationFile: {
        path: 'migration.sql',
        content: { tag: 'ok', value: readFileSync(path.join(dir, name, 'migration.sql'), 'utf8') },
      },
    })),
  };
}

type BoundFactory = ReturnType<typeof bindMigrationAwareSqlAdapterFactory> & {
  errorRegistry?: { consumeError(id: number): unknown };
};

/**
 * The engine never disposes the adapters it opens: with PostgreSQL, each call
 * left a pool with an idle connection behind (the CLI then lingered ~10 s after
 * its work, until pg's idle timeout). They are disposed here once the engine is done.
 */
function disposingFactory(factory: SqlMigrationAwareDriverAdapterFactory): {
  factory: SqlMigrationAwareDriverAdapterFactory;
  disposeAll: () => Promise<void>;
} {
  const opened: SqlDriverAdapter[] = [];
  const track = async (adapter: Promise<SqlDriverAdapter>) => {
    const a = await adapter;
    opened.push(a);
    return a;
  };
  return {
    factory: {
      provider: factory.provider,
      adapterName: factory.adapterName,
      connect: () => track(factory.connect()),
      connectToShadowDb: () => track(factory.connectToShadowDb()),
    },
    disposeAll: async () => {
      await Promise.all(opened.splice(0).map((a) => a.dispose().catch(() => {})));
    },
  };
}

async function withEngine<T>(
  factory: SqlMigrationAwareDriverAdapterFactory,
  fn: (engine: Awaited<ReturnType<EngineModule['SchemaEngine']['new']>>) => Promise<T>,
): Promise<T> {
  const bg = await loadWasm();
  const tracked = disposingFactory(factory);
  const bound = bindMigrationAwareSqlAdapterFactory(tracked.factory) as BoundFactory;
  const schema = readFileSync(SCHEMA_PATH, 'utf8');
  try {
    const engine = await bg.SchemaEngine.new({ datamodels: [['schema.prisma', schema]] }, () => {}, bound);
    try {
      return await fn(engine);
    } catch (err) {
      // Adapter errors come back as "External error id#N"; recover the real one.
      const id = /#(\d+)/.exec(String((err as Error)?.message ?? err))?.[1];
      const real = id && bound.errorRegistry ? bound.errorRegistry.consumeError(Number(id)) : undefined;
      if (real) throw new Error(`migration failed: ${JSON.stringify(real)}`, { cause: err });
      throw err;
    } finally {
      engine.free();
    }
  } finally {
    await tracked.disposeAll();
  }
}

/** Applies the pending migrations of prisma/migrations, like `prisma migrate deploy`. */
export async function applyMigrations(factory: SqlMigrationAwareDriverAdapterFactory): Promise<string[]> {
  return withEngine(factory, async (engine) => {
    const out = await engine.applyMigrations({ migrationsList: readMigrations(), filters: NO_FILTERS });
    return out.appliedMigrationNames;
  });
}

/**
 * SQL that would bring the migrations up to schema.prisma; empty when they agree.
 * The engine replays the migrations on the factory's shadow database.
 *
 * Only a PGlite factory is accepted (its shadow database is a throwaway
 * in-memory PGlite). @prisma/adapter-pg built from a connection string opens
 * its "shadow" pool on the very database of the URL, so the engine replayed the
 * whole migration SQL into that database (and then failed to describe it).
 */
export async function diffMigrationsToSchema(factory: SqlMigrationAwareDriverAdapterFactory): Promise<string> {
  if (factory.adapterName !== 'pglite-prisma-adapter') {
    throw new Error(
      `diffMigrationsToSchema needs a PGlite adapter factory (e.g. createDb({ dataDir: ':memory:' }).migrationFactory()), got ${factory.adapterName}: ` +
        'with a PostgreSQL adapter the engine would replay the migrations into that database',
    );
  }
  return withEngine(factory, async (engine) => {
    const schema = readFileSync(SCHEMA_PATH, 'utf8');
    const result = await engine.diff({
      from: { tag: 'migrations', ...readMigrations() },
      to: { tag: 'schemaDatamodel', files: [{ path: 'schema.prisma', content: schema }] },
      script: true,
      exitCode: null,
      filters: NO_FILTERS,
    });
    const sql = (result as { stdout?: string }).stdout ?? '';
    return /^\s*(-- This is an empty migration\.)?\s*$/.test(sql) ? '' : sql;
  });
}
