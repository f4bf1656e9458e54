import { readFileSync } from 'node:fs';
import path from 'node:path';
import { printSchemaFile } from '../src/graphql/print-schema';

// docs/api.md, "GraphQL": the schema is emitted to schema.graphql at the repo root and kept
// in git; this fails when the file is stale.

describe('schema.graphql', () => {
  it('is what the resolvers print (run `npm run schema:emit` when this fails)', () => {
    const onDisk = readFileSync(path.join(__dirname, '..', 'schema.graphql'), 'utf8');
    const printed = printSchemaFile();
    try {
      expect(onDisk).toBe(printed);
    } catch (err) {
      (err as Error).message = `schema.graphql is stale: run \`npm run schema:emit\` and commit the result.\n\n${(err as Error).message}`;
      throw err;
    }
  });
});
