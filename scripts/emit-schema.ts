// npm run schema:emit — writes schema.graphql from the type-graphql resolvers.
import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { printSchemaFile } from '../src/graphql/print-schema';
import { PROJECT_ROOT } from '../src/project-root';

writeFileSync(path.join(PROJECT_ROOT, 'schema.graphql'), printSchemaFile());
console.log('wrote schema.graphql');
