import { attributesDecider, CATEGORY } from '../../command-api/kit/attributes';
import type { DomainEvent } from '../../command-api/kit/decider';
import { deciderSpec } from '../support/given-when-then';

describe('attributes decider (categories, teams, menus, field groups)', () => {
  const spec = deciderSpec(attributesDecider(CATEGORY));
  const created: DomainEvent = {
    type: 'CategoryCreated',
    data: { categoryId: 5, name: 'Hardware', description: null, parentId: null },
  };

  test('creates once, with every attribute', () => {
    const state = spec
      .given([])
      .when({ kind: 'Create', id: 5, attributes: { name: 'Hardware', description: null, parentId: null } })
      .then([created]);
    expect(state).toEqual({
      status: 'active',
      id: 5,
      attributes: { name: 'Hardware', description: null, parentId: null },
    });
    spec
      .given([created])
      .when({ kind: 'Create', id: 5, attributes: { name: 'Again', description: null, parentId: null } })
      .thenThrows('conflict');
  });

  test('an update carries only the attributes that differ; the same values change nothing', () => {
    const state = spec
      .given([created])
      .when({ kind: 'Update', attributes: { name: 'Hardware', parentId: 2 } })
      .then([{ type: 'CategoryUpdated', data: { categoryId: 5, parentId: 2 } }]);
    expect(state.attributes).toEqual({ name: 'Hardware', description: null, parentId: 2 });
    spec
      .given([created])
      .when({ kind: 'Update', attributes: { name: 'Hardware' } })
      .thenNothingHappens();
  });

  test('deletes once; a deleted or missing entity is not found', () => {
    const deleted: DomainEvent = { type: 'CategoryDeleted', data: { categoryId: 5 } };
    spec.given([created]).when({ kind: 'Delete' }).then([deleted]);
    spec
      .given([created, deleted])
      .when({ kind: 'Update', attributes: { name: 'x' } })
      .thenThrows('not_found');
    spec.given([]).when({ kind: 'Delete' }).thenThrows('not_found');
  });
});
