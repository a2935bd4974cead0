import { z } from 'zod';
import { entityIdSchema } from './entity-id';

/**
 * Field definitions: the typed columns of a module's records. A record stores its values under the field's
 * `key` (`fields.<key>`); the type and key of a field never change once it exists, so stored values keep
 * their meaning. Each type has its own configuration.
 */
export const FIELD_TYPES = [
  'text',
  'long_text',
  'number',
  'decimal',
  'date',
  'datetime',
  'checkbox',
  'select',
  'multi_select',
  'email',
  'url',
  'phone',
  'user',
  'relation',
  'file',
  'button',
] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

export const TEXT_MAX_LENGTH = 500;
export const LONG_TEXT_MAX_LENGTH = 65_535;
export const DECIMAL_DEFAULT_SCALE = 2;
export const MAX_SELECT_OPTIONS = 500;
export const MAX_FIELDS_PER_MODULE = 200;

const id = entityIdSchema;
const bound = z.number().finite();

/** An `https` address, or `http` on a loopback host (for local development). */
export const webhookUrlSchema = z
  .url({ protocol: /^https?$/, message: 'must be an absolute http(s) URL' })
  .max(2048)
  .refine((value) => {
    const url = new URL(value);
    return url.protocol === 'https:' || ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
  }, 'must use https (http only for localhost)');

const noConfig = z.strictObject({});
const rangeConfig = { min: bound.optional(), max: bound.optional() };
const options = z
  .array(z.string().trim().min(1).max(200))
  .min(1, 'at least one option')
  .max(MAX_SELECT_OPTIONS, `at most ${MAX_SELECT_OPTIONS} options`)
  .refine((values) => new Set(values).size === values.length, 'options must be unique');

/** The configuration each type takes (and `{}` for types that take none). */
export const FIELD_CONFIG_SCHEMAS = {
  text: z.strictObject({ maxLength: z.number().int().min(1).max(10_000).optional() }),
  long_text: z.strictObject({ maxLength: z.number().int().min(1).max(1_000_000).optional() }),
  number: z.strictObject(rangeConfig),
  decimal: z.strictObject({ scale: z.number().int().min(0).max(10).optional(), ...rangeConfig }),
  date: noConfig,
  datetime: noConfig,
  checkbox: noConfig,
  select: z.strictObject({ options }),
  multi_select: z.strictObject({ options }),
  email: noConfig,
  url: noConfig,
  phone: noConfig,
  user: noConfig,
  /** The module whose records the field points at. */
  relation: z.strictObject({ moduleId: id }),
  file: noConfig,
  /** The address the button calls with the record. */
  button: z.strictObject({
    webhookUrl: webhookUrlSchema,
    label: z.string().trim().min(1).max(100).optional(),
  }),
} as const satisfies Record<FieldType, z.ZodType>;

export type FieldConfig = { [T in FieldType]: z.infer<(typeof FIELD_CONFIG_SCHEMAS)[T]> }[FieldType];

export const fieldDefinitionSchema = z.object({
  fieldId: id,
  key: z.string(),
  name: z.string(),
  type: z.enum(FIELD_TYPES),
  required: z.boolean(),
  config: z.record(z.string(), z.unknown()),
  /** Sort key within the module: new fields go last; `PUT /field/order/` renumbers them 1..n. */
  position: z.number().int().positive(),
  /** Part of a built-in module's template: it stays as long as its module (see `module-templates.ts`). */
  builtIn: z.boolean(),
  /**
   * Whether its values are personal data, sealed in events under the record's own key (so erasing the record
   * makes them unreadable everywhere). Absent: the type's default (`isPersonalField`).
   */
  personal: z.boolean().optional(),
});
export type FieldDefinition = z.infer<typeof fieldDefinitionSchema>;

/** The types whose values are personal unless the field says otherwise: the ones that usually hold a person's data. */
export const PERSONAL_BY_DEFAULT: ReadonlySet<FieldType> = new Set(['text', 'long_text', 'email', 'phone']);

/** Whether a field's values are personal: as it says, or as its type usually is. */
export function isPersonalField(field: Pick<FieldDefinition, 'type' | 'personal'>): boolean {
  return field.personal ?? PERSONAL_BY_DEFAULT.has(field.type);
}
