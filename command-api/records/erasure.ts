import type { RecordCreatedData, RecordUpdatedData } from '../../contracts/events/records';
import { personalSubject } from '../../contracts/personal-data';
import { streamName } from '../../contracts/streams';
import type { RecordedEvent } from '../../contracts/events/envelope';
import { isSealedValue } from '../../infra/secrets/personal-values';
import type { CommandDeps } from '../deps';
import { deleteBlobs } from '../kit/blobs';
import type { CommandContext, CommandResult } from '../kit/handler';
import { recordDecider, type RecordState } from './domain/record';
import { eraseRequestsOfRuns, runsThatWrote } from '../hooks/erasure';

export type ErasureDeps = Pick<CommandDeps, 'handler' | 'personalData' | 'blobs' | 'logger'>;

/** The keys of the fields whose values the record's events sealed: the ones an erasure leaves unreadable. */
export function sealedFieldKeys(events: readonly Pick<RecordedEvent, 'type' | 'data'>[]): string[] {
  const keys = new Set<string>();
  for (const event of events) {
    if (event.type === 'RecordCreated') {
      for (const [key, value] of Object.entries((event.data as RecordCreatedData).fields))
        if (isSealedValue(value)) keys.add(key);
    } else if (event.type === 'RecordUpdated') {
      for (const { field, from, to } of (event.data as RecordUpdatedData).changes)
        if (field.startsWith('fields.') && (isSealedValue(from) || isSealedValue(to)))
          keys.add(field.slice('fields.'.length));
    }
  }
  return [...keys].sort();
}

/**
 * Erases a record's personal data: destroys its data key (first: from then on nothing can open what was
 * sealed, whatever happens next), records the erasure, deletes its files' contents, and erases the hook and
 * mail requests whose scenario runs wrote it (what their senders sent carried the record's data). Repeating it,
 * after a success or half-way, finishes the same erasure and answers the same.
 */
export async function eraseRecord(
  deps: ErasureDeps,
  context: CommandContext,
  recordId: number,
  reason: string,
): Promise<{ result: CommandResult<RecordState>; fields: readonly string[] }> {
  const stream = streamName('record', context.tenant, recordId);
  const before = await deps.handler.load(stream, recordDecider);
  const stored: RecordedEvent[] = [];
  for await (const event of deps.personalData.sealed.readStream(stream)) stored.push(event);
  const command = { kind: 'EraseRecord', reason, fields: sealedFieldKeys(stored) } as const;
  // The decider says whether there is anything to erase (and refuses first what it refuses).
  if (recordDecider.decide(command, before.state).length > 0)
    await deps.personalData.erase(personalSubject('record', context.tenant, recordId), Date.now());
  const result = await deps.handler.handle(stream, recordDecider, command, context);
  await eraseRequestsOfRuns(deps, context, runsThatWrote(stored), reason);
  await deleteBlobs(
    deps,
    before.state.files.map((file) => file.blobKey),
    'could not delete an erased file; delete it by hand',
  );
  return { result, fields: command.fields };
}
