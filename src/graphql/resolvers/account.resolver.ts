import { Arg, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import { Allow } from '../auth-checker';
import type { GraphQLContext } from '../context';
import { AccountSettings, AccountSettingsInput } from '../types/directory.types';

/** The account's settings (admins). */
@Resolver(() => AccountSettings)
export class AccountResolver {
  @Allow('account.read')
  @Query(() => AccountSettings)
  async accountSettings(@Ctx() { viewer, services }: GraphQLContext): Promise<AccountSettings> {
    return AccountSettings.from(await services.accounts.settings(viewer!));
  }

  @Allow('account.write')
  @Mutation(() => AccountSettings)
  async updateAccountSettings(@Arg('input', () => AccountSettingsInput) input: AccountSettingsInput, @Ctx() { viewer, services }: GraphQLContext): Promise<AccountSettings> {
    return AccountSettings.from(await services.accounts.updateSettings(viewer!, input));
  }
}
