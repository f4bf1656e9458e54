import { defineConfig } from 'prisma/config';

// The CLI is used only for `prisma generate`; migrations run through the WASM
// schema engine (src/db/migrate.ts), so no URL is needed here.
export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
});
