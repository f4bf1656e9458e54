import { Field, ID, ObjectType, registerEnumType } from 'type-graphql';
import type { AccountRecord, GroupRecord, PhoneNumberRecord, UserRecord } from '../../domain/directory/directory.service';

export enum UserRole {
  ADMIN = 'admin',
  AGENT = 'agent',
  END_USER = 'end_user',
}
registerEnumType(UserRole, { name: 'UserRole' });

@ObjectType({ description: 'A user of the help desk' })
export class User {
  @Field(() => ID) id!: string;
  @Field() name!: string;
  @Field() email!: string;
  @Field(() => UserRole) role!: UserRole;
  @Field() active!: boolean;
  @Field() createdAt!: Date;

  static from(r: UserRecord): User {
    return Object.assign(new User(), { ...r, id: String(r.id), role: r.role as UserRole });
  }
}

@ObjectType({ description: 'The account (tenant) of the authenticated user' })
export class Account {
  @Field(() => ID) id!: string;
  @Field() name!: string;
  @Field() omnichannelRouting!: boolean;

  static from(r: AccountRecord): Account {
    return Object.assign(new Account(), { ...r, id: String(r.id) });
  }
}

@ObjectType({ description: 'A voice phone number of the account' })
export class PhoneNumber {
  @Field(() => ID) id!: string;
  @Field({ description: 'E.164' }) number!: string;
  @Field() callbackEnabled!: boolean;
  @Field() createdAt!: Date;

  static from(r: PhoneNumberRecord): PhoneNumber {
    return Object.assign(new PhoneNumber(), { ...r, id: String(r.id) });
  }
}

@ObjectType({ description: 'A group of agents calls can be routed to' })
export class Group {
  @Field(() => ID) id!: string;
  @Field() name!: string;
  @Field() createdAt!: Date;

  static from(r: GroupRecord): Group {
    return Object.assign(new Group(), { ...r, id: String(r.id) });
  }
}

@ObjectType({ description: 'The authenticated user and how they authenticated' })
export class Me extends User {
  @Field(() => Account) account!: Account;
  @Field({ description: 'basic or bearer' }) authenticatedVia!: string;
}
