import { z } from 'zod';
import type { FieldType } from './fields';

/**
 * Built-in modules: the templates a space can install with `POST /module {"spaceId", "template"}`. A
 * template gives the module its name, description and built-in fields; the installed module is then the
 * space's own (renamed, described, given custom fields), except that its built-in fields keep their key
 * and type and cannot be removed, so integrations can rely on them.
 *
 * Stored events name a template by its key: a key, once published, keeps its meaning.
 */

export interface TemplateField {
  readonly key: string;
  readonly name: string;
  readonly type: FieldType;
  readonly required: boolean;
  readonly config: Readonly<Record<string, unknown>>;
}

export interface ModuleTemplate {
  readonly name: string;
  readonly description: string;
  readonly fields: readonly TemplateField[];
}

export const MODULE_TEMPLATE_KEYS = ['contacts', 'companies', 'deals', 'tasks'] as const;
export type ModuleTemplateKey = (typeof MODULE_TEMPLATE_KEYS)[number];

export const moduleTemplateKeySchema = z.enum(MODULE_TEMPLATE_KEYS, {
  error: `must be one of ${MODULE_TEMPLATE_KEYS.join(', ')} (GET /module/built-in lists them)`,
});

function field(
  key: string,
  name: string,
  type: FieldType,
  options: { required?: boolean; config?: Record<string, unknown> } = {},
): TemplateField {
  return { key, name, type, required: options.required ?? false, config: options.config ?? {} };
}

export const MODULE_TEMPLATES: Readonly<Record<ModuleTemplateKey, ModuleTemplate>> = {
  contacts: {
    name: 'Contacts',
    description: 'People you work with',
    fields: [
      field('first_name', 'First name', 'text'),
      field('last_name', 'Last name', 'text'),
      field('email', 'Email', 'email'),
      field('phone', 'Phone', 'phone'),
      field('job_title', 'Job title', 'text'),
      field('lifecycle_stage', 'Lifecycle stage', 'select', {
        config: { options: ['Subscriber', 'Lead', 'Qualified lead', 'Customer', 'Former customer'] },
      }),
      field('owner', 'Owner', 'user'),
    ],
  },
  companies: {
    name: 'Companies',
    description: 'Organisations you do business with',
    fields: [
      field('website', 'Website', 'url'),
      field('industry', 'Industry', 'select', {
        config: {
          options: ['Technology', 'Finance', 'Healthcare', 'Manufacturing', 'Retail', 'Education', 'Other'],
        },
      }),
      field('employees', 'Employees', 'number', { config: { min: 0 } }),
      field('annual_revenue', 'Annual revenue', 'decimal', { config: { scale: 2, min: 0 } }),
      field('phone', 'Phone', 'phone'),
      field('address', 'Address', 'long_text', { config: { maxLength: 2000 } }),
      field('owner', 'Owner', 'user'),
    ],
  },
  deals: {
    name: 'Deals',
    description: 'Opportunities in your sales pipeline',
    fields: [
      // A deal is always somewhere in the pipeline.
      field('stage', 'Stage', 'select', {
        required: true,
        config: { options: ['Qualification', 'Proposal', 'Negotiation', 'Won', 'Lost'] },
      }),
      field('amount', 'Amount', 'decimal', { config: { scale: 2, min: 0 } }),
      field('close_date', 'Expected close date', 'date'),
      field('probability', 'Probability (%)', 'number', { config: { min: 0, max: 100 } }),
      field('owner', 'Owner', 'user'),
    ],
  },
  tasks: {
    name: 'Tasks',
    description: 'Work to do, with due dates and assignees',
    fields: [
      field('status', 'Status', 'select', {
        required: true,
        config: { options: ['To do', 'In progress', 'Done'] },
      }),
      field('priority', 'Priority', 'select', { config: { options: ['Low', 'Normal', 'High'] } }),
      field('due_date', 'Due date', 'date'),
      field('assignee', 'Assignee', 'user'),
      field('details', 'Details', 'long_text'),
    ],
  },
};
