import { openSync, writeSync, closeSync, readFileSync, unlinkSync } from 'node:fs';
import path from 'node:path';

export class DatabaseInUseError extends Error {
  constructor(dir: string, pid: number) {
    super(
      `The embedded database in ${path.resolve(dir)} is in use by another process (pid ${pid}). ` +
        'It belongs to one process at a time: stop that process first, or use DATABASE_URL with a PostgreSQL server.',
    );
    this.name = 'DatabaseInUseError';
  }
}

export interface DirLock {
  release(): void;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** An exclusive lock file holding our pid; a lock left by a dead process is taken over. */
export function acquireDirLock(dir: string): DirLock {
  const file = path.join(dir, 'server.lock');
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(file, 'wx', 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      let released = false;
      return {
        release() {
          if (released) return;
          released = true;
          try {
            if (readFileSync(file, 'utf8') === String(process.pid)) unlinkSync(file);
          } catch {
            /* already gone */
          }
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const pid = Number.parseInt(readFileSync(file, 'utf8'), 10);
      if (Number.isInteger(pid) && pid > 0 && alive(pid)) throw new DatabaseInUseError(dir, pid);
      try {
        unlinkSync(file); // stale: its owner died without releasing it
      } catch {
        /* someone else removed it first; retry */
      }
    }
  }
  throw new Error(`could not lock ${file}`);
}
