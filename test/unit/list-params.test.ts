import {
  DEFAULT_PAGE_SIZE,
  listParamsSchema,
  MAX_OFFSET,
  MAX_PAGE_SIZE,
  parseListQuery,
} from '../../contracts/query/list-params';
import { catalogue } from '../../languages/filter/resolve';
import type { StoreSort } from '../../languages/filter/store-query';
import { thrown } from '../support/thrown';

const FIELDS = catalogue({
  id: { path: 'id', type: 'integer' },
  status: { path: 'status', type: 'string' },
  createdAt: { path: 'meta.created_at', type: 'datetime' },
});

/** The refusal of a count that is not written in plain decimal digits; `found` is the quoted text. */
function notCanonical(name: string, min: number, max: number, found: string): string {
  return `${name} must be a whole number from ${min} to ${max} in plain decimal digits (no sign, spaces, leading zeros, fraction or exponent), found ${found}`;
}

const NEWEST_FIRST: StoreSort[] = [{ path: 'meta.created_at', direction: 'desc' }];

describe('parseListQuery', () => {
  describe('defaults', () => {
    it('given no parameters, when parsed, then offset 0 and the default page size apply', () => {
      expect(parseListQuery({}, FIELDS)).toEqual({ offset: 0, limit: DEFAULT_PAGE_SIZE });
      expect(parseListQuery(undefined, FIELDS)).toEqual({ offset: 0, limit: DEFAULT_PAGE_SIZE });
    });

    it('given a default order and no order parameter, when parsed, then the default sort is used', () => {
      expect(parseListQuery({}, FIELDS, { order: NEWEST_FIRST })).toEqual({
        sort: NEWEST_FIRST,
        offset: 0,
        limit: DEFAULT_PAGE_SIZE,
      });
    });

    it('given a default order and an order parameter, when parsed, then the parameter wins', () => {
      expect(parseListQuery({ order: 'id;ASC' }, FIELDS, { order: NEWEST_FIRST }).sort).toEqual([
        { path: 'id', direction: 'asc' },
      ]);
    });

    it('given empty parameters as sent by forms, when parsed, then they count as omitted', () => {
      expect(parseListQuery({ filter: '', order: ' ', offset: '', limit: '' }, FIELDS)).toEqual({
        offset: 0,
        limit: DEFAULT_PAGE_SIZE,
      });
    });

    it('given parameters the route reads itself, when parsed, then they are accepted', () => {
      expect(parseListQuery({ space_id: '7', limit: '5' }, FIELDS, { otherParams: ['space_id'] })).toEqual({
        offset: 0,
        limit: 5,
      });
    });

    it.each([
      [{ filter: 'id=7', name: 'Beta' }, ['name']],
      [{ filter: 'id=7', name: '' }, ['name']],
      [{ filter: 'id=7', 'status=(a': 'b)' }, ['status=(a']],
      [{ limit: '5', Limit: '6', space_id: '7' }, ['Limit', 'space_id']],
      [{ _: '1700000000' }, ['_']],
    ])(
      'given unknown query parameters %j, when parsed, then validation_failed names each of them',
      (raw, names) => {
        const error = thrown(() => parseListQuery(raw, FIELDS));
        expect(error.kind).toBe('validation_failed');
        expect((error.details as Array<{ path: string }>).map((issue) => issue.path)).toEqual(names);
        for (const name of names) expect(error.message).toContain(`unknown query parameter "${name}"`);
        expect(error.message).toContain('%26');
      },
    );
  });

  describe('everything together', () => {
    it('given filter, order, offset and limit, when parsed, then one StoreQuery holds them all', () => {
      // given
      const raw = {
        filter: 'status=(active|pending);id>10',
        order: 'createdAt;ASC,id',
        offset: '20',
        limit: '10',
      };
      // when
      const query = parseListQuery(raw, FIELDS);
      // then
      expect(query).toEqual({
        filter: {
          kind: 'and',
          children: [
            {
              kind: 'or',
              children: [
                { kind: 'compare', path: 'status', op: 'eq', value: 'active' },
                { kind: 'compare', path: 'status', op: 'eq', value: 'pending' },
              ],
            },
            { kind: 'compare', path: 'id', op: 'gt', value: 10, numeric: true },
          ],
        },
        sort: [
          { path: 'meta.created_at', direction: 'asc' },
          { path: 'id', direction: 'desc' },
        ],
        offset: 20,
        limit: 10,
      });
    });
  });

  describe('offset and limit', () => {
    it.each([
      [{ limit: '1' }, { offset: 0, limit: 1 }],
      [{ limit: String(MAX_PAGE_SIZE) }, { offset: 0, limit: MAX_PAGE_SIZE }],
      [{ offset: '0' }, { offset: 0, limit: DEFAULT_PAGE_SIZE }],
      [{ offset: String(MAX_OFFSET) }, { offset: MAX_OFFSET, limit: DEFAULT_PAGE_SIZE }],
    ])('given %j, when parsed, then paging is %j', (raw, expected) => {
      expect(parseListQuery(raw, FIELDS)).toEqual(expected);
    });

    // Every other spelling of a number is refused: coerced, each would read as some count the client did not write.
    it.each([
      '0x10',
      '0o7',
      '0b1',
      ' 5',
      '5 ',
      ' 5 ',
      '\t5',
      '5\n',
      '+5',
      '-0',
      '05',
      '00',
      '5.0',
      '5.',
      '.5',
      '1e2',
      '5e0',
      '0.5e1',
      'Infinity',
      'NaN',
      '1_0',
      '１２',
      '١٢',
      '٥',
      '5\u00a0',
    ])('given limit and offset %j, when parsed, then each is refused as not canonical', (text) => {
      for (const [name, min, max] of [
        ['limit', 1, MAX_PAGE_SIZE],
        ['offset', 0, MAX_OFFSET],
      ] as const) {
        const error = thrown(() => parseListQuery({ [name]: text }, FIELDS));
        const message = notCanonical(name, min, max, JSON.stringify(text));
        expect(error.details).toEqual([{ path: name, message }]);
      }
    });

    it('given a huge limit, when parsed, then validation_failed says limit must be at most 1000', () => {
      // when
      const error = thrown(() => parseListQuery({ limit: '100000' }, FIELDS));
      // then
      expect(error.kind).toBe('validation_failed');
      expect(error.status).toBe(400);
      expect(error.message).toBe('limit must be at most 1000');
      expect(error.details).toEqual([{ path: 'limit', message: 'limit must be at most 1000' }]);
    });

    it.each([
      [{ limit: '0' }, 'limit', 'limit must be at least 1'],
      [{ limit: '-5' }, 'limit', notCanonical('limit', 1, MAX_PAGE_SIZE, '"-5"')],
      [{ limit: '1001' }, 'limit', 'limit must be at most 1000'],
      [{ limit: '99999999999999999999999' }, 'limit', 'limit must be at most 1000'],
      [{ limit: 'ten' }, 'limit', notCanonical('limit', 1, MAX_PAGE_SIZE, '"ten"')],
      [{ limit: '1.5' }, 'limit', notCanonical('limit', 1, MAX_PAGE_SIZE, '"1.5"')],
      [{ limit: '1e2' }, 'limit', notCanonical('limit', 1, MAX_PAGE_SIZE, '"1e2"')],
      [{ offset: '-1' }, 'offset', notCanonical('offset', 0, MAX_OFFSET, '"-1"')],
      [{ offset: String(MAX_OFFSET + 1) }, 'offset', `offset must be at most ${MAX_OFFSET}`],
      [{ offset: 'x' }, 'offset', notCanonical('offset', 0, MAX_OFFSET, '"x"')],
      [{ limit: '5'.repeat(100) }, 'limit', 'limit must be at most 1000'],
      [{ offset: '0'.repeat(100) }, 'offset', notCanonical('offset', 0, MAX_OFFSET, `"${'0'.repeat(24)}…"`)],
      [{ limit: ['1', '2'] }, 'limit', 'limit must be given once, not 2 times'],
      [{ offset: ['1', '2', '3'] }, 'offset', 'offset must be given once, not 3 times'],
      [{ filter: ['a=1', 'b=2'] }, 'filter', 'filter must be given once, not 2 times'],
      [{ order: ['id', 'status'] }, 'order', 'order must be given once, not 2 times'],
      [{ filter: { a: '1' } }, 'filter', 'filter must be a single text value'],
      [{ limit: 10 }, 'limit', 'limit must be a single text value'],
    ])('given %j, when parsed, then validation_failed on %s: %s', (raw, path, message) => {
      const error = thrown(() => parseListQuery(raw, FIELDS));
      expect(error.kind).toBe('validation_failed');
      expect(error.message).toBe(message);
      expect(error.details).toEqual([{ path, message }]);
    });

    it('given several bad parameters, when parsed, then every problem is reported', () => {
      const error = thrown(() => parseListQuery({ offset: '-1', limit: '5000', order: ['a', 'b'] }, FIELDS));
      const offsetProblem = notCanonical('offset', 0, MAX_OFFSET, '"-1"');
      expect(error.message).toBe(
        `${offsetProblem}; limit must be at most 1000; order must be given once, not 2 times`,
      );
      expect(error.details).toEqual([
        { path: 'offset', message: offsetProblem },
        { path: 'limit', message: 'limit must be at most 1000' },
        { path: 'order', message: 'order must be given once, not 2 times' },
      ]);
    });

    it('given a query that is not an object, when parsed, then validation_failed says what is expected', () => {
      const error = thrown(() => parseListQuery('limit=5', FIELDS));
      expect(error.kind).toBe('validation_failed');
      expect(error.details).toEqual([
        { path: '', message: 'the query parameters must be an object of text values' },
      ]);
    });
  });

  describe('filter and order errors pass through with their position', () => {
    it('given a filter syntax error, when parsed, then filter_syntax with the position', () => {
      const error = thrown(() => parseListQuery({ filter: 'status=active;' }, FIELDS));
      expect(error.kind).toBe('filter_syntax');
      expect(error.details).toEqual({ position: 14, expected: 'a field name', found: 'end of filter' });
    });

    it('given an unknown filter field, when parsed, then unknown_field lists the fields', () => {
      const error = thrown(() => parseListQuery({ filter: 'nope=1' }, FIELDS));
      expect(error.kind).toBe('unknown_field');
      expect(error.message).toBe(
        'filter: unknown field "nope" at position 0; filterable fields: id, status, createdAt',
      );
    });

    it('given a filter value of the wrong type, when parsed, then validation_failed names field and position', () => {
      const error = thrown(() => parseListQuery({ filter: 'status=a;id>abc' }, FIELDS));
      expect(error.kind).toBe('validation_failed');
      expect(error.message).toBe(
        'filter: field "id" at position 9 expects an integer in canonical decimal form, found "abc"',
      );
    });

    it('given an order syntax error, when parsed, then filter_syntax with the order position', () => {
      const error = thrown(() => parseListQuery({ order: 'id;UP' }, FIELDS));
      expect(error.kind).toBe('filter_syntax');
      expect(error.message).toBe('order: expected a direction (ASC or DESC) at position 3, found "UP"');
    });

    it('given an unknown order field, when parsed, then unknown_field with the position', () => {
      const error = thrown(() => parseListQuery({ order: 'id,nope' }, FIELDS));
      expect(error.kind).toBe('unknown_field');
      expect(error.details).toMatchObject({ field: 'nope', position: 3 });
    });
  });
});

describe('listParamsSchema', () => {
  it('given raw strings, when parsed, then numbers are numbers and empty values are dropped', () => {
    expect(listParamsSchema.parse({ filter: 'a=1', offset: '3', limit: '', order: 'a' })).toEqual({
      filter: 'a=1',
      offset: 3,
      limit: undefined,
      order: 'a',
    });
  });
});
