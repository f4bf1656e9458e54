import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { loadConfig, ConfigError } from '../config';
import { createDb } from '../db/create-db';
import { migrate } from '../db/migrate';
import { DatabaseInUseError } from '../db/dir-lock';
import { DirectoryService } from '../domain/directory/directory.service';
import { ValidationError } from '../domain/errors';

const USAGE = `usage: npm run cli -- <resource> <command> [options]

  account create --name <name> [--subdomain <subdomain>]   (default: derived from the name)
  account list
  account set --id <id> --omnichannel-routing <true|false>
  user create --account <id> --email <email> --password <password> --role <admin|agent|end_user> [--name <name>]
  user list [--account <id>]
  phone-number create --account <id> --number <E.164> [--callback-enabled]
  phone-number list [--account <id>]
  group create --account <id> --name <name>
  group list [--account <id>]

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

function optionalId(flags: Flags, name: string): bigint | undefined {
  return flags[name] === undefined ? undefined : id(flags, name);
}

/** JSON with bigint ids as numbers and dates as ISO strings; never a password hash. */
function print(value: unknown): void {
  process.stdout.write(
    JSON.stringify(value, (key, v) => (key === 'passwordHash' ? undefined : typeof v === 'bigint' ? Number(v) : v), 2) + '\n',
  );
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
      subdomain: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [resource, command] = positionals;
  if (values.help || !resource) {
    console.log(USAGE);
    return;
  }
  const key = `${resource} ${command ?? ''}`.trim();
  const known = ['account create', 'account list', 'account set', 'user create', 'user list', 'phone-number create', 'phone-number list', 'group create', 'group list'];
  if (!known.includes(key)) throw new UsageError(`unknown command "${key}"`);

  const config = loadConfig();
  const db = await createDb({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 2 });
  try {
    await migrate(db);
    const dir = new DirectoryService(db.prisma);
    const flags = values as Flags;
    switch (key) {
      case 'account create': {
        if (flags.subdomain !== undefined && typeof flags.subdomain !== 'string') throw new UsageError('--subdomain needs a value');
        return print(await dir.createAccount(required(flags, 'name'), flags.subdomain));
      }
      case 'account list':
        return print(await dir.listAccounts());
      case 'account set': {
        const raw = required(flags, 'omnichannel-routing');
        if (raw !== 'true' && raw !== 'false') throw new UsageError('--omnichannel-routing must be true or false');
        return print(await dir.setOmnichannelRouting(id(flags, 'id'), raw === 'true'));
      }
      case 'user create':
        return print(
          await dir.createUser({
            accountId: id(flags, 'account'),
            email: required(flags, 'email'),
            password: required(flags, 'password'),
            role: required(flags, 'role'),
            name: typeof flags.name === 'string' ? flags.name : undefined,
          }),
        );
      case 'user list':
        return print(await dir.listUsers(optionalId(flags, 'account')));
      case 'phone-number create':
        return print(await dir.createPhoneNumber({ accountId: id(flags, 'account'), number: required(flags, 'number'), callbackEnabled: flags['callback-enabled'] === true }));
      case 'phone-number list':
        return print(await dir.listPhoneNumbers(optionalId(flags, 'account')));
      case 'group create':
        return print(await dir.createGroup({ accountId: id(flags, 'account'), name: required(flags, 'name') }));
      case 'group list':
        return print(await dir.listGroups(optionalId(flags, 'account')));
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
