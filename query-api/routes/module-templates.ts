import type { Router } from 'express';
import { PlatformError } from '../../contracts/errors';
import {
  MODULE_TEMPLATE_KEYS,
  MODULE_TEMPLATES,
  moduleTemplateKeySchema,
} from '../../contracts/module-templates';
import { validate } from '../../contracts/validation';
import { getModuleTemplate, listModuleTemplates, noQuery } from '../../contracts/api/fields';
import { mount } from '../../infra/http/operations';
import { sendJson } from '../../infra/http/respond';
import { moduleTemplateView } from '../representations';
import { authorize } from './entities';

/**
 * The built-in module templates a space can install (`POST /module` with `template`): from the contracts,
 * not a read model, since they ship with the release. Registered before every `/module/{moduleId}` route.
 */
export function addModuleTemplateRoutes(router: Router): void {
  mount(router, listModuleTemplates, (req, res) => {
    authorize(req, 'module', 'read');
    validate(noQuery, req.query, 'query');
    const items = MODULE_TEMPLATE_KEYS.map((key) => moduleTemplateView(key, MODULE_TEMPLATES[key]));
    sendJson(res, 200, { items, meta: { total: items.length, offset: 0, limit: items.length } });
  });
  mount(router, getModuleTemplate, (req, res) => {
    authorize(req, 'module', 'read');
    const key = moduleTemplateKeySchema.safeParse(req.params.template);
    if (!key.success)
      throw new PlatformError(
        'not_found',
        `no built-in module "${String(req.params.template)}"; GET /module/built-in lists them`,
      );
    sendJson(res, 200, moduleTemplateView(key.data, MODULE_TEMPLATES[key.data]));
  });
}
