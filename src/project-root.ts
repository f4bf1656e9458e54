import { existsSync } from 'node:fs';
import path from 'node:path';

/** The folder holding package.json, whether running from src/ (ts) or dist/src/ (built). */
export const PROJECT_ROOT = (() => {
  let dir = __dirname;
  while (!existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('package.json not found above ' + __dirname);
    dir = parent;
  }
  return dir;
})();
