// The first admin's generated password, shown to whoever started the service: on
// stderr, as plain text, whatever LOG_LEVEL says (with LOG_LEVEL=error or silent a
// log line would never be seen, and then nothing could sign in). Never through pino:
// the JSON log goes to collectors and files that outlive the start, and a password
// is a secret. Written once, on the start that created the admin.

/** The block on stderr that gives the generated password of the admin the first start created. */
export function printFirstAdminPassword(email: string, password: string): void {
  process.stderr.write(
    [
      '',
      '================================================================',
      'First start: created account "default" and its first admin.',
      `  email:    ${email}`,
      `  password: ${password}`,
      'This password is shown only this once, and is in no log.',
      'Sign in with it, then change it (PUT /api/v2/users/{id}/password).',
      `Lost it? npm run cli -- user reset-password --email ${email}`,
      '================================================================',
      '',
      '',
    ].join('\n'),
  );
}
