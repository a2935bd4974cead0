/** A layer of an express 5 router tree, as far as walking it needs. */
interface RouteLayer {
  rawPath?: string;
  route?: { path: string | string[]; methods: Record<string, boolean> };
  handle: { stack?: RouteLayer[] };
}

/** Every route of an express app, walked from its router tree: `[method, path]` with the mount prefixes. */
export function routesOf(app: unknown): Array<[string, string]> {
  return routesIn((app as { router: { stack: RouteLayer[] } }).router.stack);
}

function routesIn(stack: readonly RouteLayer[], prefix = ''): Array<[string, string]> {
  return stack.flatMap((layer): Array<[string, string]> => {
    if (layer.route) {
      const paths = Array.isArray(layer.route.path) ? layer.route.path : [layer.route.path];
      return Object.keys(layer.route.methods).flatMap((method) =>
        paths.map((path): [string, string] => [method.toUpperCase(), `${prefix}${path}`]),
      );
    }
    if (!layer.handle.stack) return [];
    const mount = layer.rawPath === undefined || layer.rawPath === '/' ? '' : layer.rawPath;
    return routesIn(layer.handle.stack, `${prefix}${mount}`);
  });
}
