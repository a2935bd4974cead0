import { remoteLinkDecider } from '../../command-api/records/domain/remote-link';
import type { RemoteLinkEvent } from '../../contracts/events/records';
import { deciderSpec } from '../support/given-when-then';

describe('remote link decider', () => {
  const spec = deciderSpec(remoteLinkDecider);
  const link = {
    kind: 'LinkRemote' as const,
    remoteApplication: 'crm',
    remoteId: 'A-1',
    recordId: 5,
    recordExists: true,
  };
  const linked: RemoteLinkEvent = {
    type: 'RemoteLinked',
    data: { remoteApplication: 'crm', remoteId: 'A-1', recordId: 5 },
  };

  test('links a remote key to a live record; the same link again changes nothing', () => {
    expect(spec.given([]).when(link).then([linked])).toEqual({ recordId: 5 });
    spec.given([linked]).when(link).thenNothingHappens();
  });

  test('linking it to another record moves it', () => {
    const state = spec
      .given([linked])
      .when({ ...link, recordId: 6 })
      .then([{ type: 'RemoteLinked', data: { remoteApplication: 'crm', remoteId: 'A-1', recordId: 6 } }]);
    expect(state.recordId).toBe(6);
  });

  test('refuses a record that does not exist', () => {
    spec
      .given([])
      .when({ ...link, recordExists: false })
      .thenThrows('not_found');
  });
});
