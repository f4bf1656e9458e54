import { Arg, Args, Ctx, ID, Int, Mutation, Query, Resolver } from 'type-graphql';
import { offsetPage } from '../../domain/pagination';
import { Allow } from '../auth-checker';
import { OffsetPageArgs } from '../connection';
import type { GraphQLContext } from '../context';
import { PhoneNumber, PhoneNumberInput, UpdatePhoneNumberInput } from '../types/directory.types';

/** Voice phone numbers (docs/api.md, "Voice phone numbers"): agents and admins read, admins write. */
@Resolver(() => PhoneNumber)
export class PhoneNumberResolver {
  @Allow('directory.read')
  @Query(() => [PhoneNumber], { description: 'Voice phone numbers of the account (agents and admins), id ascending, one page (perPage 1..100)' })
  async phoneNumbers(@Args() args: OffsetPageArgs, @Ctx() { viewer, services, baseUrl }: GraphQLContext): Promise<PhoneNumber[]> {
    return (await services.phoneNumbers.list(viewer!, offsetPage(args))).map((r) => PhoneNumber.from(r, baseUrl));
  }

  @Allow('directory.read')
  @Query(() => Int, { description: 'How many voice phone numbers the account has' })
  phoneNumberCount(@Ctx() { viewer, services }: GraphQLContext): Promise<number> {
    return services.phoneNumbers.count(viewer!);
  }

  @Allow('directory.read')
  @Query(() => PhoneNumber, { nullable: true })
  async phoneNumber(@Arg('id', () => ID) id: string, @Ctx() { viewer, services, baseUrl }: GraphQLContext): Promise<PhoneNumber | null> {
    const found = await services.phoneNumbers.find(viewer!, id);
    return found && PhoneNumber.from(found, baseUrl);
  }

  @Allow('directory.write')
  @Mutation(() => PhoneNumber, { description: 'Creating a deleted number again brings it back, with its id' })
  async createPhoneNumber(@Arg('input', () => PhoneNumberInput) input: PhoneNumberInput, @Ctx() { viewer, services, baseUrl }: GraphQLContext): Promise<PhoneNumber> {
    return PhoneNumber.from(await services.phoneNumbers.create(viewer!, input), baseUrl);
  }

  @Allow('directory.write')
  @Mutation(() => PhoneNumber)
  async updatePhoneNumber(
    @Arg('id', () => ID) id: string,
    @Arg('input', () => UpdatePhoneNumberInput) input: UpdatePhoneNumberInput,
    @Ctx() { viewer, services, baseUrl }: GraphQLContext,
  ): Promise<PhoneNumber> {
    return PhoneNumber.from(await services.phoneNumbers.update(viewer!, id, input), baseUrl);
  }

  @Allow('directory.write')
  @Mutation(() => Boolean, { description: 'Soft delete: the number disappears, and its queued and calling callback requests are cancelled' })
  async deletePhoneNumber(@Arg('id', () => ID) id: string, @Ctx() { viewer, services }: GraphQLContext): Promise<boolean> {
    await services.phoneNumbers.delete(viewer!, id);
    return true;
  }
}
