import { takeOpenApiViolations } from '../../src/http/plugins/openapi-conformance';

// jest setupFilesAfterEnv: every test file fails when an answer of the app under test
// (createTestApp checks them, src/http/plugins/openapi-conformance.ts) was not what the
// OpenAPI document (/api/v2/openapi.json, docs/openapi.json) declares.
afterAll(() => {
  const violations = takeOpenApiViolations();
  if (violations.length === 0) return;
  const lines = violations.slice(0, 20).map((v) => `  ${v.request} → ${v.status} (${v.route}): ${v.problems.join(' | ')}`);
  throw new Error(`${violations.length} answer(s) not described by the OpenAPI document:\n${lines.join('\n')}${violations.length > 20 ? '\n  …' : ''}`);
});
