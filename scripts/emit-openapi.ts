// npm run openapi:emit — writes docs/openapi.json, the OpenAPI document of the REST API
// (what GET /api/v2/openapi.json serves), from the routes' schemas.
import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { printOpenApiFile } from '../src/http/openapi-file';
import { PROJECT_ROOT } from '../src/project-root';

void (async () => {
  writeFileSync(path.join(PROJECT_ROOT, 'docs', 'openapi.json'), await printOpenApiFile());
  console.log('wrote docs/openapi.json');
})();
