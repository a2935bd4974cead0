import type { Router } from 'express';
import { z } from 'zod';
import { PlatformError } from '../../contracts/errors';
import {
  MODULE_TEMPLATE_KEYS,
  MODULE_TEMPLATES,
  moduleTemplateKeySchema,
} from '../../contracts/module-templates';
import { validate } from '../../contracts/validation';
import { sendJson } from '../../infra/http/respond';
import { moduleTemplateView } from '../representations';
import { authorize } from './entities';

/** The catalogue is short and fixed: no filter, order or paging to take. */
const noQuery = z.strictObject({}, { error: 'GET /module/built-in takes no query parameters' });

/**
 * The built-in module templates a space can install (`POST /module` with `template`): from the contracts,
 * not a read model, since they ship with the release. Registered before every `/module/{moduleId}` route.
 */
export function addModuleTemplateRoutes(router: Router): void {
  router.get('/module/built-in', (req, res) => {
    authorize(req, 'module', 'read');
    validate(noQuery, req.query, 'query');
    const items = MODULE_TEMPLATE_KEYS.map((key) => moduleTemplateView(key, MODULE_TEMPLATES[key]));
    sendJson(res, 200, { items, meta: { total: items.length, offset: 0, limit: items.length } });
  });
  router.get('/module/built-in/:template', (req, res) => {
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
