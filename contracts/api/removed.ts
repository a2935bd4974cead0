/**
 * Routes the API published and then removed. They answer 410 Gone, so an old client learns why its call
 * fails, and they are left out of the description of the versions after their removal.
 */
import type { HttpMethod } from './operation';

export interface RemovedRoute {
  readonly method: HttpMethod;
  readonly path: string;
  /** What the 410 names. */
  readonly what: string;
  readonly removedIn: string;
}

const comments = { what: 'record comments', removedIn: '5.5.3' } as const;

export const RECORD_COMMENT_ROUTES: readonly RemovedRoute[] = [
  { method: 'get', path: '/record/{recordId}/comment', ...comments },
  { method: 'get', path: '/record/{recordId}/comment/{commentId}', ...comments },
  { method: 'post', path: '/record/{recordId}/comment', ...comments },
  { method: 'put', path: '/record/{recordId}/comment/{commentId}', ...comments },
  { method: 'delete', path: '/record/{recordId}/comment/{commentId}', ...comments },
];

export const REMOVED_ROUTES: readonly RemovedRoute[] = RECORD_COMMENT_ROUTES;
