import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './helpers/processes';

// Rules about the sources themselves, which neither the compiler nor ESLint can see.

function filesUnder(dir: string, ext: RegExp): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = path.posix.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!['generated', 'results', 'node_modules'].includes(entry.name)) out.push(...filesUnder(rel, ext));
    } else if (ext.test(entry.name)) out.push(rel);
  }
  return out;
}

/** Every line of the files matching `pattern`, as "file:line: text". */
function linesMatching(files: string[], pattern: RegExp): string[] {
  return files.flatMap((file) =>
    readFileSync(path.join(ROOT, file), 'utf8')
      .split('\n')
      .flatMap((line, i) => (pattern.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
  );
}

describe('references in comments and docs', () => {
  // The repository's documentation is docs/api.md and README.md; a comment points at a
  // section of docs/api.md by its heading, or says the why itself. Documents that are
  // not in the repository (an "API.md" with numbered sections, a "seed") must not come back.
  const texts = [
    ...['src', 'scripts', 'bench', 'test'].flatMap((dir) => filesUnder(dir, /\.(ts|js|md|graphql|sql)$/)),
    ...filesUnder('docs', /\.(md|json)$/),
    // (not prisma/migrations, nor the functions they inline: an applied migration's text is fixed)
    'prisma/schema.prisma',
    'README.md',
    'schema.graphql',
  ].filter((file) => file !== 'test/source-rules.test.ts');

  it('cite no API.md and no seed section', () => {
    expect(linesMatching(texts, /\bAPI\.md\b|[Ss]eed §|[Ss]eed rule/)).toEqual([]);
  });
});

describe('one composition root', () => {
  const code = [...filesUnder('src', /\.ts$/), ...filesUnder('bench', /\.ts$/), ...filesUnder('scripts', /\.ts$/)];

  it('builds every repository in src/domain/repositories.ts, and nowhere else', () => {
    expect(linesMatching(code, /new \w+Repository\(/).filter((l) => !l.startsWith('src/domain/repositories.ts:'))).toEqual([]);
  });

  it('builds every service in src/domain/services.ts (createServices), and nowhere else', () => {
    expect(linesMatching(code, /new (\w+Service|Authenticator|OAuthServer|CursorCodec)\(/).filter((l) => !l.startsWith('src/domain/services.ts:'))).toEqual([]);
  });
});
