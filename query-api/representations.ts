import type { ModuleTemplate } from '../contracts/module-templates';
import type { Document } from '../contracts/read-model-changes';
import { isPersonalField, type FieldType } from '../contracts/fields';

/** API shapes of read-model documents: the entity's integer id as `id`, no store bookkeeping. */
function audit(doc: Document): Record<string, unknown> {
  return {
    createdAt: doc.createdAt,
    updatedAt: doc.updatedAt,
    createdBy: doc.createdBy,
    updatedBy: doc.updatedBy,
  };
}

export function spaceView(doc: Document): Record<string, unknown> {
  return { id: doc.spaceId, name: doc.name, description: doc.description ?? null, ...audit(doc) };
}

export function moduleView(doc: Document): Record<string, unknown> {
  return {
    id: doc.moduleId,
    spaceId: doc.spaceId,
    name: doc.name,
    description: doc.description ?? null,
    kind: doc.kind,
    template: doc.template,
    ...audit(doc),
  };
}

/** A built-in module template as `GET /module/built-in` lists it. */
export function moduleTemplateView(key: string, template: ModuleTemplate): Record<string, unknown> {
  return {
    template: key,
    name: template.name,
    description: template.description,
    fields: template.fields.map((field, index) => ({ ...field, position: index + 1 })),
  };
}

/** The label ids of a record document (stored as the paths `labels.<id>`), ascending. */
function labelIdsOf(doc: Record<string, unknown>): number[] {
  const labels = (doc.labels ?? {}) as Record<string, unknown>;
  return Object.keys(labels)
    .map(Number)
    .sort((a, b) => a - b);
}

export function recordView(doc: Document): Record<string, unknown> {
  return {
    id: doc.recordId,
    moduleId: doc.moduleId,
    spaceId: doc.spaceId,
    name: doc.name,
    fields: doc.fields ?? {},
    labelIds: labelIdsOf(doc),
    ...(doc.deletedAt !== undefined && { deletedAt: doc.deletedAt, deletedBy: doc.deletedBy }),
    ...audit(doc),
  };
}

export function fieldView(doc: Document): Record<string, unknown> {
  return {
    id: doc.fieldId,
    moduleId: doc.moduleId,
    spaceId: doc.spaceId,
    key: doc.key,
    name: doc.name,
    type: doc.type,
    required: doc.required,
    config: doc.config ?? {},
    position: doc.position,
    builtIn: doc.builtIn,
    personal: isPersonalField({
      type: doc.type as FieldType,
      ...(typeof doc.personal === 'boolean' && { personal: doc.personal }),
    }),
    ...audit(doc),
  };
}

export function labelView(doc: Document): Record<string, unknown> {
  return { id: doc.labelId, name: doc.name, color: doc.color, ...audit(doc) };
}

export function auditView(doc: Document): Record<string, unknown> {
  return {
    position: doc.position,
    eventId: doc.eventId,
    type: doc.type,
    category: doc.category,
    streamId: doc.streamId,
    revision: doc.revision,
    at: doc.at,
    userId: doc.userId,
    credentialId: doc.credentialId,
    clientId: doc.clientId,
    commandId: doc.commandId,
    correlationId: doc.correlationId,
    ...(doc.data !== undefined && { data: doc.data }),
  };
}

export function fieldHistoryView(doc: Document): Record<string, unknown> {
  return {
    field: doc.field,
    oldValue: doc.from,
    newValue: doc.to,
    changedAt: doc.at,
    userId: doc.userId,
    credentialId: doc.credentialId,
    clientId: doc.clientId,
  };
}

export function segmentView(doc: Document): Record<string, unknown> {
  return {
    id: doc.segmentId,
    spaceId: doc.spaceId,
    name: doc.name,
    filter: doc.filter ?? null,
    order: doc.order ?? null,
    ...audit(doc),
  };
}

/** An attributes entity (category, team, menu, field group): its id as `id`, its attributes, its audit columns. */
export function attributesView(idKey: string): (doc: Document) => Record<string, unknown> {
  return (doc) => {
    const {
      id: _storeId,
      tenant: _tenant,
      revision: _revision,
      [idKey]: entityId,
      createdAt: _createdAt,
      updatedAt: _updatedAt,
      createdBy: _createdBy,
      updatedBy: _updatedBy,
      ...attributes
    } = doc;
    return { id: entityId, ...attributes, ...audit(doc) };
  };
}

export function userView(doc: Document): Record<string, unknown> {
  return { id: doc.userId, email: doc.email, name: doc.name, role: doc.role };
}
