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
  @Query(() => [PhoneNumber], { description: 'Voice phone numbers of the account, id ascending, one page (perPage 1..100)' })
  async phoneNumbers(@Args() args: OffsetPageArgs, @Ctx() { viewer, services, baseUrl }: GraphQLContext): Promise<PhoneNumber[]> {
    return (await services.phoneNumbers.list(viewer!, offsetPage(args))).map((r) => PhoneNumber.from(r, baseUrl));
  }

  @Allow('directory.read')
  @Query(() => Int, { description: 'How many voice phone numbers the account has' })
  phoneNumberCount(@Ctx() { viewer, services }: GraphQLContext): Promise<number> {
    return services.phoneNumbers.count(viewer!);
  }

  @Allow('directory.read')
  @Query(() => PhoneNumber, { nullable: true, description: 'A voice phone number of the account; null when there is none with this id' })
  async phoneNumber(@Arg('id', () => ID, { description: "The phone number's id" }) id: string, @Ctx() { viewer, services, baseUrl }: GraphQLContext): Promise<PhoneNumber | null> {
    const found = await services.phoneNumbers.find(viewer!, id);
    return found && PhoneNumber.from(found, baseUrl);
  }

  @Allow('directory.write')
  @Mutation(() => PhoneNumber, { description: 'Adds a voice phone number and returns it; adding a deleted number again brings it back, with its id' })
  async createPhoneNumber(@Arg('input', () => PhoneNumberInput, { description: 'The new number' }) input: PhoneNumberInput, @Ctx() { viewer, services, baseUrl }: GraphQLContext): Promise<PhoneNumber> {
    return PhoneNumber.from(await services.phoneNumbers.create(viewer!, input), baseUrl);
  }

  @Allow('directory.write')
  @Mutation(() => PhoneNumber, { description: 'Changes a phone number (omitted fields keep their value) and returns it' })
  async updatePhoneNumber(
    @Arg('id', () => ID, { description: "The phone number's id" }) id: string,
    @Arg('input', () => UpdatePhoneNumberInput, { description: 'The fields to change' }) input: UpdatePhoneNumberInput,
    @Ctx() { viewer, services, baseUrl }: GraphQLContext,
  ): Promise<PhoneNumber> {
    return PhoneNumber.from(await services.phoneNumbers.update(viewer!, id, input), baseUrl);
  }

  @Allow('directory.write')
  @Mutation(() => Boolean, { description: 'Deletes the number (softly: adding it again brings it back) and returns true; its queued and calling callback requests are cancelled' })
  async deletePhoneNumber(@Arg('id', () => ID, { description: "The phone number's id" }) id: string, @Ctx() { viewer, services }: GraphQLContext): Promise<boolean> {
    await services.phoneNumbers.delete(viewer!, id);
    return true;
  }
}
