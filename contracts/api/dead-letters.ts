/** Dead letters: events a projection could not apply and went past (operator administrators only). */
import { z } from 'zod';
import { operation } from './operation';
import { listQuery, pageOf, READ_ERRORS } from './shared';

const description =
  'An event a projection could not apply (the projection failed on it, or the read store refused its ' +
  'changes while it took other writes) is recorded here and the projection goes on past it, so that one ' +
  'event never stops a read model for every system. Only administrators of the operator system see and ' +
  'retry them: they name events of every system.';

export const deadLetter = z
  .object({
    id: z.string().meta({ description: '`<projection>:<version>:<position>`.' }),
    projection: z.string(),
    version: z.number().int(),
    position: z.string().meta({ description: 'The event’s global position (a decimal integer).' }),
    eventId: z.string(),
    type: z.string(),
    stream: z.string(),
    tenant: z.string().meta({ description: 'The system whose stream holds the event.' }),
    error: z.string().meta({ description: 'Why it could not be applied (at most 2,000 characters).' }),
    at: z.string().meta({ description: 'When the projection went past it.' }),
  })
  .meta({ id: 'DeadLetter' });

export const deadLetterPath = z.object({
  deadLetterId: z
    .string()
    .min(1)
    .max(200)
    .regex(/^[a-zA-Z][a-zA-Z0-9_-]{0,99}:[0-9]{1,10}:[0-9]{1,20}$/)
    .meta({ description: 'The dead letter: `<projection>:<version>:<position>`.' }),
});

export const listDeadLetters = operation({
  operationId: 'listDeadLetters',
  method: 'get',
  path: '/dead-letter',
  tag: 'platform',
  summary: 'List the events projections could not apply (operator administrators)',
  description: `${description} Filter and order on \`projection\`, \`version\`, \`tenant\`, \`type\`, \`stream\`, \`eventId\`, \`at\` (default: newest first).`,
  query: listQuery,
  servedByCommandApi: true,
  responses: {
    200: { description: 'A page of dead letters.', schema: pageOf(deadLetter, 'DeadLetterPage') },
    ...READ_ERRORS,
  },
  security: 'token',
});

export const retryDeadLetter = operation({
  operationId: 'retryDeadLetter',
  method: 'post',
  path: '/dead-letter/{deadLetterId}/retry',
  tag: 'platform',
  summary: 'Apply a dead letter’s event again (operator administrators)',
  description:
    `${description} A retry projects the event again and applies its changes at the event’s position, so ` +
    'they never overwrite what later events wrote; on success the dead letter is gone. To bring a read model ' +
    'wholly up to date with the event, rebuild the projection (`bin/replay`).',
  params: deadLetterPath,
  responses: {
    200: { description: 'Applied: the dead letter is gone.', schema: deadLetter },
    404: { description: 'No such dead letter.' },
    409: { description: 'The event still cannot be applied: the answer says why; the dead letter stays.' },
    ...READ_ERRORS,
  },
  security: 'token',
});

export const DEAD_LETTER_OPERATIONS = [listDeadLetters, retryDeadLetter];
