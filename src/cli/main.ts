import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { loadConfig, ConfigError, databaseConnection } from '../config';
import { createDb } from '../db/create-db';
import { migrate } from '../db/migrate';
import { DatabaseInUseError } from '../db/dir-lock';
import { systemActor } from '../domain/audit/audit-log.repository';
import { servicesFor } from '../domain/services';
import { ValidationError } from '../domain/errors';
import type { RetentionReport } from '../domain/retention/retention.service';

const USAGE = `usage: npm run cli -- <resource> <command> [options]

  account create --name <name> [--subdomain <subdomain>]   (default: derived from the name)
  account list
  account set --id <id> [--omnichannel-routing <true|false>] [--api-token-access <true|false>]   (at least one;
                           --api-token-access false: Basic {email}/token sign-ins refused, e.g. while a leak is handled)
  user create --account <id> --email <email> --password <password> --role <admin|agent|end_user> [--name <name>]
  user list [--account <id>]
  user reset-password --email <email> [--account <id>]   prints a new generated password, once; ends the user's
                                                          sessions and OAuth grants (--account: when several accounts have the email)
  phone-number create --account <id> --number <E.164> [--callback-enabled]
  phone-number list [--account <id>]
  group create --account <id> --name <name>
  group list [--account <id>]
  purge [--dry-run]        removes what is over past its retention, once, and prints per table what
                           it removed (--dry-run: what it would remove, removing nothing)

Works on DATABASE_URL, or on the embedded database in DATA_DIR (default ./.data).`;

class UsageError extends Error {}

type Flags = Record<string, string | boolean | undefined>;

function required(flags: Flags, name: string): string {
  const v = flags[name];
  if (typeof v !== 'string' || v === '') throw new UsageError(`--${name} is required`);
  return v;
}

function id(flags: Flags, name: string): bigint {
  const v = required(flags, name);
  if (!/^[1-9]\d{0,17}$/.test(v)) throw new UsageError(`--${name} must be a positive integer, got "${v}"`);
  return BigInt(v);
}

/** JSON with bigint ids as numbers and dates as ISO strings; never a password hash. */
function print(value: unknown): void {
  process.stdout.write(
    JSON.stringify(value, (key, v) => (key === 'passwordHash' ? undefined : typeof v === 'bigint' ? Number(v) : v), 2) + '\n',
  );
}

/** A purge's figures as a person reads them: one line per table, the total, how long it took. */
function purgeTable(report: RetentionReport): string {
  const rows = Object.entries(report.removed);
  const total = rows.reduce((sum, [, n]) => sum + n, 0);
  const heading = report.dryRun ? 'would remove' : 'removed';
  const width = Math.max(...rows.map(([table]) => table.length), 'total'.length);
  const line = (label: string, value: string) => `${label.padEnd(width)}  ${value.padStart(heading.length)}\n`;
  const number = (n: number) => n.toLocaleString('en-US');
  let out = line('table', heading) + rows.map(([table, n]) => line(table, number(n))).join('') + line('total', number(total));
  out += `${report.dryRun ? 'dry run: nothing was removed; ' : ''}${report.stopped ? 'stopped before the end (run it again to go on); ' : ''}took ${Math.round(report.durationMs)} ms\n`;
  return out;
}

async function run(argv: string[]): Promise<void> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      id: { type: 'string' },
      account: { type: 'string' },
      email: { type: 'string' },
      password: { type: 'string' },
      role: { type: 'string' },
      number: { type: 'string' },
      'callback-enabled': { type: 'boolean' },
      'omnichannel-routing': { type: 'string' },
      'api-token-access': { type: 'string' },
      subdomain: { type: 'string' },
      'dry-run': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [resource, command] = positionals;
  if (values.help || !resource) {
    console.log(USAGE);
    return;
  }
  const key = `${resource} ${command ?? ''}`.trim();
  const known = ['account create', 'account list', 'account set', 'user create', 'user list', 'user reset-password', 'phone-number create', 'phone-number list', 'group create', 'group list', 'purge'];
  if (!known.includes(key)) throw new UsageError(`unknown command "${key}"`);

  const config = loadConfig();
  const db = await createDb({ ...databaseConnection(config, { replicas: false }), poolSize: 2 });
  try {
    await migrate(db);
    const { accounts, users, phoneNumbers, groups, retention } = servicesFor(db, config);
    const flags = values as Flags;
    /** The account a command acts in, as the system (the audit log's actor "CLI"); refused when it does not exist. */
    const inAccount = async (name: string) => {
      const accountId = id(flags, name);
      if (!(await accounts.find({ accountId }))) {
        throw new ValidationError({ account: [{ error: 'NotFound', description: `Account: ${accountId} does not exist` }] });
      }
      return systemActor(accountId);
    };
    /** Every account's records (or one account's), id ascending. */
    const listOf = async <T extends { id: bigint }>(list: (actor: ReturnType<typeof systemActor>) => Promise<T[]>) => {
      const ids = flags.account === undefined ? (await accounts.list()).map((a) => a.id) : [(await inAccount('account')).accountId];
      const all: T[] = [];
      for (const accountId of ids) all.push(...(await list(systemActor(accountId))));
      return all.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    };
    /** Every record of a paged list (100 per page). */
    const allPages = async <T>(page: (n: number) => Promise<T[]>) => {
      const out: T[] = [];
      for (let n = 1; ; n++) {
        const rows = await page(n);
        out.push(...rows);
        if (rows.length < 100) return out;
      }
    };
    switch (key) {
      case 'account create': {
        if (flags.subdomain !== undefined && typeof flags.subdomain !== 'string') throw new UsageError('--subdomain needs a value');
        return print(await accounts.create(required(flags, 'name'), flags.subdomain));
      }
      case 'account list':
        return print(await accounts.list());
      case 'account set': {
        const flag = (name: 'omnichannel-routing' | 'api-token-access') => {
          const raw = flags[name];
          if (raw === undefined) return undefined;
          if (raw !== 'true' && raw !== 'false') throw new UsageError(`--${name} must be true or false`);
          return raw === 'true';
        };
        const settings = { omnichannelRouting: flag('omnichannel-routing'), apiTokenAccess: flag('api-token-access') };
        if (settings.omnichannelRouting === undefined && settings.apiTokenAccess === undefined) throw new UsageError('account set needs --omnichannel-routing or --api-token-access');
        return print(await accounts.updateSettings(await inAccount('id'), settings));
      }
      case 'user create': {
        const email = required(flags, 'email');
        const actor = await inAccount('account');
        return print(
          await users.create(actor, {
            email,
            password: required(flags, 'password'),
            role: required(flags, 'role'),
            // the CLI names a user after the email's local part when --name is not given
            name: typeof flags.name === 'string' ? flags.name : email.trim().split('@')[0] || email,
          }),
        );
      }
      case 'user list':
        return print(await listOf((actor) => users.listOfAccount(actor)));
      case 'user reset-password': {
        const email = required(flags, 'email');
        const only = flags.account === undefined ? undefined : (await inAccount('account')).accountId;
        const found = (await users.withEmailInAnyAccount(email)).filter((u) => only === undefined || u.accountId === only);
        if (found.length === 0) {
          const where = only === undefined ? 'in any account' : `in account ${only}`;
          throw new ValidationError({ email: [{ error: 'NotFound', description: `no user has the email ${email} ${where}` }] });
        }
        if (found.length > 1) {
          const ids = found.map((u) => u.accountId).join(', ');
          throw new ValidationError({ account: [{ error: 'BlankValue', description: `${email} is a user in several accounts (${ids}): say which with --account <id>` }] });
        }
        // the one place the new password is shown: this answer (it is stored only as a hash)
        return print(await users.resetPassword(systemActor(found[0].accountId), found[0].id));
      }
      case 'phone-number create':
        return print(await phoneNumbers.create(await inAccount('account'), { number: required(flags, 'number'), callbackEnabled: flags['callback-enabled'] === true }));
      case 'phone-number list':
        return print(await listOf((actor) => allPages((page) => phoneNumbers.list(actor, { page, perPage: 100 }))));
      case 'group create':
        return print(await groups.create(await inAccount('account'), { name: required(flags, 'name') }));
      case 'group list':
        return print(await listOf((actor) => allPages((page) => groups.list(actor, { page, perPage: 100 }))));
      case 'purge': {
        // Ctrl-C or SIGTERM: stops after the batch under way (what it removed stays removed)
        const stop = new AbortController();
        for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => stop.abort());
        return void process.stdout.write(purgeTable(await retention.run({ dryRun: flags['dry-run'] === true, signal: stop.signal })));
      }
    }
  } finally {
    await db.close();
  }
}

run(process.argv.slice(2)).catch((err: unknown) => {
  if (err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    console.error(`error: ${(err as Error).message}\n\n${USAGE}`);
    process.exit(2);
  }
  if (err instanceof ValidationError) {
    console.error(`error: ${Object.values(err.details).flat().map((d) => d.description).join('; ')}`);
    process.exit(1);
  }
  if (err instanceof ConfigError || err instanceof DatabaseInUseError) {
    console.error(`error: ${err.message}`);
    process.exit(3);
  }
  console.error(`error: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
