import { Arg, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import { Allow } from '../auth-checker';
import type { GraphQLContext } from '../context';
import { AccountSettings, AccountSettingsInput } from '../types/directory.types';

/** The account's settings (admins). */
@Resolver(() => AccountSettings)
export class AccountResolver {
  @Allow('account.read')
  @Query(() => AccountSettings, { description: "The account's settings" })
  async accountSettings(@Ctx() { viewer, services }: GraphQLContext): Promise<AccountSettings> {
    return AccountSettings.from(await services.accounts.settings(viewer!));
  }

  @Allow('account.write')
  @Mutation(() => AccountSettings, { description: "Changes the account's settings (omitted ones keep their value) and returns them" })
  async updateAccountSettings(@Arg('input', () => AccountSettingsInput, { description: 'The settings to change' }) input: AccountSettingsInput, @Ctx() { viewer, services }: GraphQLContext): Promise<AccountSettings> {
    return AccountSettings.from(await services.accounts.updateSettings(viewer!, input));
  }
}
