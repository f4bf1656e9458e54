import { ArgsType, Field, ID, InputType, ObjectType, registerEnumType } from 'type-graphql';
import type { AccountRecord } from '../../domain/directory/account.service';
import type { GroupRecord } from '../../domain/directory/group.service';
import type { PhoneNumberRecord } from '../../domain/directory/phone-number.service';
import type { UserRecord } from '../../domain/directory/user.service';
import { describePhoneNumber } from '../../domain/phone';
import { Connection, PageArgs } from '../connection';

export enum UserRole {
  ADMIN = 'admin',
  AGENT = 'agent',
  END_USER = 'end_user',
}
registerEnumType(UserRole, { name: 'UserRole' });

@ObjectType({ simpleResolvers: true, description: 'A user of the help desk' })
export class User {
  @Field(() => ID) id!: string;
  @Field() name!: string;
  @Field() email!: string;
  @Field(() => UserRole) role!: UserRole;
  @Field({ description: 'false once deactivated (or deleted): the user can no longer sign in, and their tokens were revoked' }) active!: boolean;
  @Field() createdAt!: Date;
  @Field(() => Date, { nullable: true, description: 'null until the first change' }) updatedAt!: Date | null;
  @Field({ description: 'REST URL of this record' }) url!: string;

  static from(r: UserRecord, baseUrl: string): User {
    return Object.assign(new User(), {
      id: String(r.id), name: r.name, email: r.email, role: r.role as UserRole, active: r.active, createdAt: r.createdAt, updatedAt: r.updatedAt,
      url: `${baseUrl}/api/v2/users/${r.id}.json`,
    });
  }
}

@ObjectType({ simpleResolvers: true, description: 'Relay connection of users, id ascending' })
export class UserConnection extends Connection(User) {}

@ArgsType()
export class UsersArgs extends PageArgs {
  @Field(() => UserRole, { nullable: true, description: 'Only the users of this role' }) role?: UserRole | null;
}

@InputType({ description: 'A new user' })
export class CreateUserInput {
  @Field(() => String, { nullable: true, description: 'Required, 1..255 characters' }) name?: string | null;
  @Field(() => String, { nullable: true, description: 'Required; unique in the account (case-insensitive)' }) email?: string | null;
  @Field(() => UserRole, { nullable: true, description: 'END_USER by default' }) role?: UserRole | null;
  @Field(() => String, { nullable: true, description: '8..1024 characters; without one the user cannot sign in with Basic until one is set' })
  password?: string | null;
}

@InputType({ description: 'Writable fields of a user; omitted fields keep their value' })
export class UpdateUserInput {
  @Field(() => String, { nullable: true }) name?: string | null;
  @Field(() => String, { nullable: true }) email?: string | null;
  @Field(() => UserRole, { nullable: true }) role?: UserRole | null;
  @Field(() => Boolean, { nullable: true, description: 'false deactivates the user and revokes their tokens' }) active?: boolean | null;
}

@ObjectType({ simpleResolvers: true, description: 'The account (tenant) of the authenticated user' })
export class Account {
  @Field(() => ID) id!: string;
  @Field() name!: string;
  @Field() omnichannelRouting!: boolean;

  static from(r: AccountRecord): Account {
    return Object.assign(new Account(), { id: String(r.id), name: r.name, omnichannelRouting: r.omnichannelRouting });
  }
}

@ObjectType({ simpleResolvers: true, description: "The account's settings (admins)" })
export class AccountSettings {
  @Field({ description: 'Route a callback request to its first group only' }) omnichannelRouting!: boolean;
  @Field(() => Date, { nullable: true, description: 'Last change of the account' }) updatedAt!: Date | null;

  static from(r: AccountRecord): AccountSettings {
    return Object.assign(new AccountSettings(), { omnichannelRouting: r.omnichannelRouting, updatedAt: r.updatedAt });
  }
}

@InputType({ description: "The account's settings to change; omitted ones keep their value" })
export class AccountSettingsInput {
  @Field(() => Boolean, { nullable: true }) omnichannelRouting?: boolean | null;
}

@ObjectType({ simpleResolvers: true, description: 'What a phone number can do (Zendesk capabilities)' })
export class PhoneNumberCapabilities {
  @Field() voice!: boolean;
  @Field() sms!: boolean;
  @Field() mms!: boolean;
}

@ObjectType({ simpleResolvers: true, description: 'A voice phone number of the account' })
export class PhoneNumber {
  @Field(() => ID) id!: string;
  @Field({ description: 'E.164' }) number!: string;
  @Field({ description: 'International format, e.g. +1 415 555 2671' }) displayNumber!: string;
  @Field(() => String, { nullable: true }) nickname!: string | null;
  @Field(() => String, { nullable: true, description: 'ISO 3166-1 alpha-2; null for non-geographic numbers' }) countryCode!: string | null;
  @Field(() => PhoneNumberCapabilities) capabilities!: PhoneNumberCapabilities;
  @Field() callbackEnabled!: boolean;
  @Field() createdAt!: Date;
  @Field(() => Date, { nullable: true }) updatedAt!: Date | null;
  @Field({ description: 'REST URL of this record' }) url!: string;

  static from(r: PhoneNumberRecord, baseUrl: string): PhoneNumber {
    const { display, country } = describePhoneNumber(r.number);
    return Object.assign(new PhoneNumber(), {
      id: String(r.id), number: r.number, displayNumber: display, nickname: r.nickname, countryCode: country,
      capabilities: Object.assign(new PhoneNumberCapabilities(), { voice: r.voiceEnabled, sms: r.smsEnabled, mms: r.mmsEnabled }),
      callbackEnabled: r.callbackEnabled, createdAt: r.createdAt, updatedAt: r.updatedAt,
      url: `${baseUrl}/api/v2/channels/voice/phone_numbers/${r.id}.json`,
    });
  }
}

@InputType({ description: 'Capabilities to set; omitted ones keep their value (on create: voice true, sms and mms false)' })
export class PhoneNumberCapabilitiesInput {
  @Field(() => Boolean, { nullable: true }) voice?: boolean | null;
  @Field(() => Boolean, { nullable: true }) sms?: boolean | null;
  @Field(() => Boolean, { nullable: true }) mms?: boolean | null;
}

@InputType({ description: 'Writable fields of a phone number; omitted fields keep their value (the number itself is read-only)' })
export class UpdatePhoneNumberInput {
  @Field(() => String, { nullable: true, description: 'At most 255 characters; null or "" removes it' }) nickname?: string | null;
  @Field(() => Boolean, { nullable: true, description: 'false by default' }) callbackEnabled?: boolean | null;
  @Field(() => PhoneNumberCapabilitiesInput, { nullable: true }) capabilities?: PhoneNumberCapabilitiesInput | null;
}

@InputType({ description: 'A new voice phone number (or a deleted one brought back)' })
export class PhoneNumberInput extends UpdatePhoneNumberInput {
  @Field(() => String, { nullable: true, description: 'Required (E.164); read-only afterwards' }) number?: string | null;
}

@ObjectType({ simpleResolvers: true, description: 'A group of agents calls can be routed to' })
export class Group {
  @Field(() => ID) id!: string;
  @Field() name!: string;
  @Field({ description: '"" when none' }) description!: string;
  @Field() createdAt!: Date;
  @Field(() => Date, { nullable: true }) updatedAt!: Date | null;
  @Field({ description: 'REST URL of this record' }) url!: string;

  static from(r: GroupRecord, baseUrl: string): Group {
    return Object.assign(new Group(), {
      id: String(r.id), name: r.name, description: r.description, createdAt: r.createdAt, updatedAt: r.updatedAt,
      url: `${baseUrl}/api/v2/groups/${r.id}.json`,
    });
  }
}

@InputType({ description: 'Fields of a group; on update, omitted fields keep their value' })
export class GroupInput {
  @Field(() => String, { nullable: true, description: 'Required on create, 1..255 characters' }) name?: string | null;
  @Field(() => String, { nullable: true, description: 'At most 1000 characters; null or "" for none' }) description?: string | null;
}

@ObjectType({ simpleResolvers: true, description: 'The authenticated user and how they authenticated' })
export class Me extends User {
  @Field(() => Account) account!: Account;
  @Field({ description: 'basic or bearer' }) authenticatedVia!: string;
}
