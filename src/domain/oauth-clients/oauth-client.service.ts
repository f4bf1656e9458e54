import type { PrismaClient } from '../../generated/prisma/client';
import { NotFoundError } from '../errors';
import { constantTimeEqual, hmacHex, randomUrlSafe } from '../crypto';
import { parseId } from '../ids';
import type { Viewer } from '../auth/viewer';
import { validateOAuthClient, type OAuthClientInput } from './oauth-client.validation';

export interface OAuthClientRecord {
  id: bigint;
  accountId: bigint;
  name: string;
  company: string | null;
  identifier: string;
  /** the full secret right after create/regenerate, else its first 10 characters + "..." */
  clientSecret: string;
  clientType: 'public' | 'confidential';
  scopes: string;
  redirectUris: string[];
  agentId: bigint | null;
  createdAt: Date;
  updatedAt: Date | null;
}

const SECRET_PREFIX_LENGTH = 10;
const SELECT = {
  id: true, accountId: true, name: true, company: true, identifier: true, secretPrefix: true,
  clientType: true, scopes: true, redirectUris: true, agentId: true, createdAt: true, updatedAt: true,
} as const;
type Row = { secretPrefix: string } & Omit<OAuthClientRecord, 'clientSecret'>;

export function truncateSecret(prefix: string): string {
  return `${prefix}...`;
}

function toRecord({ secretPrefix, ...row }: Row, fullSecret?: string): OAuthClientRecord {
  return { ...row, clientSecret: fullSecret ?? truncateSecret(secretPrefix) };
}

/** OAuth clients of the viewer's account (API.md §5). Authorization is checked by the caller. */
export class OAuthClientService {
  constructor(private readonly prisma: PrismaClient, private readonly hashKey: Buffer) {}

  private newSecret(): { secret: string; secretHash: string; secretPrefix: string } {
    const secret = randomUrlSafe(32); // 256 bits
    return { secret, secretHash: hmacHex(this.hashKey, secret), secretPrefix: secret.slice(0, SECRET_PREFIX_LENGTH) };
  }

  async list(viewer: Viewer): Promise<OAuthClientRecord[]> {
    const rows = await this.prisma.oAuthClient.findMany({ where: { accountId: viewer.accountId }, orderBy: { id: 'asc' }, select: SELECT });
    return rows.map((r) => toRecord(r));
  }

  async find(viewer: Viewer, rawId: unknown): Promise<OAuthClientRecord | null> {
    const id = parseId(rawId);
    if (id === null) return null;
    const row = await this.prisma.oAuthClient.findFirst({ where: { id, accountId: viewer.accountId }, select: SELECT });
    return row && toRecord(row);
  }

  /** Clients by id within one account, for DataLoader batching. */
  async findMany(accountId: bigint, ids: readonly bigint[]): Promise<OAuthClientRecord[]> {
    const rows = await this.prisma.oAuthClient.findMany({ where: { accountId, id: { in: [...ids] } }, select: SELECT });
    return rows.map((r) => toRecord(r));
  }

  async create(viewer: Viewer, input: OAuthClientInput): Promise<OAuthClientRecord> {
    const fields = validateOAuthClient(input, false);
    const { secret, secretHash, secretPrefix } = this.newSecret();
    const row = await this.prisma.oAuthClient.create({
      data: {
        accountId: viewer.accountId,
        name: fields.name!,
        company: fields.company ?? null,
        clientType: fields.clientType ?? 'public',
        scopes: fields.scopes!,
        redirectUris: fields.redirectUris!,
        identifier: randomUrlSafe(30), // 40 url-safe characters
        secretHash,
        secretPrefix,
        agentId: viewer.userId,
      },
      select: SELECT,
    });
    return toRecord(row, secret);
  }

  async update(viewer: Viewer, rawId: unknown, input: OAuthClientInput): Promise<OAuthClientRecord> {
    const id = this.requireId(rawId);
    const fields = validateOAuthClient(input, true);
    const { count } = await this.prisma.oAuthClient.updateMany({
      where: { id, accountId: viewer.accountId },
      data: { ...fields, updatedAt: new Date() },
    });
    if (count === 0) throw new NotFoundError();
    return (await this.find(viewer, id))!;
  }

  /** Deletes the client and revokes all its tokens in one transaction. */
  async delete(viewer: Viewer, rawId: unknown): Promise<void> {
    const id = this.requireId(rawId);
    await this.prisma.$transaction(async (tx) => {
      const client = await tx.oAuthClient.findFirst({ where: { id, accountId: viewer.accountId }, select: { id: true } });
      if (!client) throw new NotFoundError();
      await tx.oAuthToken.updateMany({ where: { clientId: id, revokedAt: null }, data: { revokedAt: new Date() } });
      await tx.oAuthClient.delete({ where: { id } });
    });
  }

  /** A new secret, shown once; the previous one stops working at once. */
  async regenerateSecret(viewer: Viewer, rawId: unknown): Promise<OAuthClientRecord> {
    const id = this.requireId(rawId);
    const { secret, secretHash, secretPrefix } = this.newSecret();
    const { count } = await this.prisma.oAuthClient.updateMany({
      where: { id, accountId: viewer.accountId },
      data: { secretHash, secretPrefix, updatedAt: new Date() },
    });
    if (count === 0) throw new NotFoundError();
    const row = await this.prisma.oAuthClient.findUniqueOrThrow({ where: { id }, select: SELECT });
    return toRecord(row, secret);
  }

  /** For OAuth flows: does `secret` belong to the client `identifier`? Constant-time on the hashes. */
  async verifySecret(identifier: string, secret: string): Promise<boolean> {
    const row = await this.prisma.oAuthClient.findUnique({ where: { identifier }, select: { secretHash: true } });
    const presented = hmacHex(this.hashKey, secret);
    // Compare against something of the same length even when the client is unknown.
    return constantTimeEqual(presented, row?.secretHash ?? '0'.repeat(presented.length)) && row !== null;
  }

  private requireId(raw: unknown): bigint {
    const id = parseId(raw);
    if (id === null) throw new NotFoundError();
    return id;
  }
}
