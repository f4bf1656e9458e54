import { ArgsType, Field, ID, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
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
registerEnumType(UserRole, {
  name: 'UserRole',
  description: "A user's role in the account: what they may do (REST `role`: `admin`, `agent`, `end_user`)",
  valuesConfig: {
    ADMIN: { description: 'Manages the account: its users, OAuth clients and tokens, groups, phone numbers, settings and audit log' },
    AGENT: { description: 'Answers customers: reads groups and phone numbers, creates and reads callback requests' },
    END_USER: { description: 'A customer: reads themselves and their own tokens' },
  },
});

@ObjectType({ simpleResolvers: true, description: 'A user of the help desk' })
export class User {
  @Field(() => ID, { description: "The user's id: a positive integer, as a string" }) id!: string;
  @Field({ description: 'Display name, 1..255 characters' }) name!: string;
  @Field({ description: 'Email address, unique in the account whatever its case; the Basic sign-in name' }) email!: string;
  @Field(() => UserRole, { description: 'What the user may do in the account' }) role!: UserRole;
  @Field({ description: 'False once deactivated (or deleted): the user can no longer sign in, and their tokens were revoked' }) active!: boolean;
  @Field({ description: 'When the user was created (ISO 8601, UTC)' }) createdAt!: Date;
  @Field(() => Date, { nullable: true, description: 'When the user last changed; null until the first change' }) updatedAt!: Date | null;
  @Field({ description: 'REST URL of this record' }) url!: string;

  static from(r: UserRecord, baseUrl: string): User {
    return Object.assign(new User(), {
      id: String(r.id), name: r.name, email: r.email, role: r.role as UserRole, active: r.active, createdAt: r.createdAt, updatedAt: r.updatedAt,
      url: `${baseUrl}/api/v2/users/${r.id}.json`,
    });
  }
}

@ObjectType({ simpleResolvers: true, description: 'A page of users, id ascending (Relay connection)' })
export class UserConnection extends Connection(User) {}

@ArgsType()
export class UsersArgs extends PageArgs {
  @Field(() => UserRole, { nullable: true, description: 'Only the users of this role' }) role?: UserRole | null;
}

@InputType({ description: 'A new user' })
export class CreateUserInput {
  @Field(() => String, { nullable: true, description: 'Display name: required, 1..255 characters after trimming' }) name?: string | null;
  @Field(() => String, { nullable: true, description: 'Email address: required, at most 254 characters, unique in the account whatever its case' }) email?: string | null;
  @Field(() => UserRole, { nullable: true, description: 'END_USER by default; making an ADMIN needs a password sign-in or an unscoped write token' }) role?: UserRole | null;
  @Field(() => String, { nullable: true, description: 'Password, 8..1024 characters; without one the user cannot sign in with Basic until one is set' })
  password?: string | null;
}

@InputType({ description: 'Writable fields of a user; omitted fields keep their value' })
export class UpdateUserInput {
  @Field(() => String, { nullable: true, description: 'New display name, 1..255 characters after trimming' }) name?: string | null;
  @Field(() => String, { nullable: true, description: 'New email address, unique in the account whatever its case' }) email?: string | null;
  @Field(() => UserRole, { nullable: true, description: 'New role; making an ADMIN needs a password sign-in or an unscoped write token' }) role?: UserRole | null;
  @Field(() => Boolean, { nullable: true, description: 'False deactivates the user and revokes their tokens and grants; true reactivates them' }) active?: boolean | null;
}

@ObjectType({ simpleResolvers: true, description: 'The account (tenant) of the authenticated user' })
export class Account {
  @Field(() => ID, { description: "The account's id" }) id!: string;
  @Field({ description: "The account's name" }) name!: string;
  @Field({ description: 'Whether a callback request is routed to its first group only (true) or to all its groups (false)' }) omnichannelRouting!: boolean;

  static from(r: AccountRecord): Account {
    return Object.assign(new Account(), { id: String(r.id), name: r.name, omnichannelRouting: r.omnichannelRouting });
  }
}

@ObjectType({ simpleResolvers: true, description: "The account's settings (admins)" })
export class AccountSettings {
  @Field({ description: 'Whether a callback request is routed to its first group only (true) or to all its groups (false)' }) omnichannelRouting!: boolean;
  @Field(() => Int, { description: 'Seconds an agent has to accept an offered callback before it goes to the next agent (1–600; 30 by default)' })
  callbackOfferTimeout!: number;
  @Field(() => Int, { description: 'Seconds before a callback that was not answered (no answer, busy) is offered again (0–86,400; 120 by default)' })
  callbackRetryDelay!: number;
  @Field(() => Int, { description: 'Dial attempts of a callback before it fails (1–10; 3 by default)' }) callbackMaxAttempts!: number;
  @Field(() => Int, { description: 'Seconds an agent spends in wrap-up after a callback before the next offer (0–3,600; 0 by default)' }) wrapUpTime!: number;
  @Field({ description: 'Whether API tokens sign in (Basic {email}/token:{api_token}); false refuses them like a wrong token, while admins still manage the tokens (true by default)' })
  apiTokenAccess!: boolean;
  @Field(() => Date, { nullable: true, description: 'When the account last changed; null if it never did' }) updatedAt!: Date | null;

  static from(r: AccountRecord): AccountSettings {
    return Object.assign(new AccountSettings(), {
      omnichannelRouting: r.omnichannelRouting, callbackOfferTimeout: r.callbackOfferTimeout, callbackRetryDelay: r.callbackRetryDelay,
      callbackMaxAttempts: r.callbackMaxAttempts, wrapUpTime: r.wrapUpTime, apiTokenAccess: r.apiTokenAccess, updatedAt: r.updatedAt,
    });
  }
}

@InputType({ description: "The account's settings to change; omitted ones keep their value" })
export class AccountSettingsInput {
  @Field(() => Boolean, { nullable: true, description: 'True: route each new callback request to its first group only; false: to all its groups' }) omnichannelRouting?: boolean | null;
  @Field(() => Int, { nullable: true, description: 'Seconds to accept an offer, 1–600' }) callbackOfferTimeout?: number | null;
  @Field(() => Int, { nullable: true, description: 'Seconds before a retry after no answer or busy, 0–86,400' }) callbackRetryDelay?: number | null;
  @Field(() => Int, { nullable: true, description: 'Dial attempts before a callback fails, 1–10' }) callbackMaxAttempts?: number | null;
  @Field(() => Int, { nullable: true, description: 'Seconds of wrap-up after a callback, 0–3,600' }) wrapUpTime?: number | null;
  @Field(() => Boolean, { nullable: true, description: 'True: API tokens sign in (Basic {email}/token:{api_token}); false: such sign-ins are refused (401)' }) apiTokenAccess?: boolean | null;
}

@ObjectType({ simpleResolvers: true, description: 'What a phone number can do (Zendesk capabilities)' })
export class PhoneNumberCapabilities {
  @Field({ description: 'Takes voice calls (and callback requests)' }) voice!: boolean;
  @Field({ description: 'Sends and receives text messages' }) sms!: boolean;
  @Field({ description: 'Sends and receives picture messages' }) mms!: boolean;
}

@ObjectType({ simpleResolvers: true, description: 'A voice phone number of the account' })
export class PhoneNumber {
  @Field(() => ID, { description: "The phone number's id" }) id!: string;
  @Field({ description: 'The number in E.164 (e.g. +14155552671); read-only' }) number!: string;
  @Field({ description: 'The number in international format, for people: e.g. +1 415 555 2671' }) displayNumber!: string;
  @Field(() => String, { nullable: true, description: 'A name for the number, at most 255 characters; null when none' }) nickname!: string | null;
  @Field(() => String, { nullable: true, description: "The number's country, ISO 3166-1 alpha-2 (e.g. US); null for non-geographic numbers" }) countryCode!: string | null;
  @Field(() => PhoneNumberCapabilities, { description: 'What the number can do' }) capabilities!: PhoneNumberCapabilities;
  @Field({ description: 'Whether callers may request a callback on this number' }) callbackEnabled!: boolean;
  @Field({ description: 'When the number was added (ISO 8601, UTC)' }) createdAt!: Date;
  @Field(() => Date, { nullable: true, description: 'When the number last changed; null until the first change' }) updatedAt!: Date | null;
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
  @Field(() => Boolean, { nullable: true, description: 'Takes voice calls (and callback requests)' }) voice?: boolean | null;
  @Field(() => Boolean, { nullable: true, description: 'Sends and receives text messages' }) sms?: boolean | null;
  @Field(() => Boolean, { nullable: true, description: 'Sends and receives picture messages' }) mms?: boolean | null;
}

@InputType({ description: 'Writable fields of a phone number; omitted fields keep their value (the number itself is read-only)' })
export class UpdatePhoneNumberInput {
  @Field(() => String, { nullable: true, description: 'A name for the number, at most 255 characters; null or "" removes it' }) nickname?: string | null;
  @Field(() => Boolean, { nullable: true, description: 'Whether callers may request a callback on this number; false by default' }) callbackEnabled?: boolean | null;
  @Field(() => PhoneNumberCapabilitiesInput, { nullable: true, description: 'Capabilities to change; omitted ones keep their value' }) capabilities?: PhoneNumberCapabilitiesInput | null;
}

@InputType({ description: 'A new voice phone number (or a deleted one brought back)' })
export class PhoneNumberInput extends UpdatePhoneNumberInput {
  @Field(() => String, { nullable: true, description: 'The number: required, E.164 (e.g. +14155552671) and valid for its country; read-only afterwards' }) number?: string | null;
}

@ObjectType({ simpleResolvers: true, description: 'A group of agents calls can be routed to' })
export class Group {
  @Field(() => ID, { description: "The group's id" }) id!: string;
  @Field({ description: "The group's name, 1..255 characters" }) name!: string;
  @Field({ description: 'What the group is for, at most 1000 characters; "" when none' }) description!: string;
  @Field({ description: 'When the group was created (ISO 8601, UTC)' }) createdAt!: Date;
  @Field(() => Date, { nullable: true, description: 'When the group last changed; null until the first change' }) updatedAt!: Date | null;
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
  @Field(() => String, { nullable: true, description: "The group's name: required on create, 1..255 characters" }) name?: string | null;
  @Field(() => String, { nullable: true, description: 'What the group is for, at most 1000 characters; null or "" for none' }) description?: string | null;
}

@ObjectType({ simpleResolvers: true, description: 'The authenticated user and how they authenticated' })
export class Me extends User {
  @Field(() => Account, { description: "The user's account (tenant)" }) account!: Account;
  @Field({ description: 'How this request authenticated: "basic" (email and password), "api_token" (Basic with {email}/token and an API token) or "bearer" (an OAuth token)' }) authenticatedVia!: string;
}
