import type { AppContext } from '../context.ts';
import { libraryBody } from '../contract/libraries.ts';
import { route, routes } from './route.ts';

/** Libraries: the admin adds host folders, sees their scans, rescans and removes them. Scans run in the background. */
export function libraryRoutes(ctx: AppContext) {
  const { libraries } = ctx.services;
  const scanInBackground = (id: string) => {
    libraries.scan(id).catch((err: unknown) => ctx.log.warn('library scan failed', { library: id, err: String(err) }));
  };
  return routes([
    route('GET /api/admin/libraries', { handler: () => libraries.list() }),
    route('POST /api/admin/libraries', {
      body: libraryBody,
      handler: ({ principal, body, set }) => {
        const result = libraries.add(principal, body);
        scanInBackground(result.library.id);
        set.status = 201;
        return { library: libraries.get(result.library.id), warning: result.warning };
      },
    }),
    route('GET /api/admin/libraries/:id', { handler: ({ params }) => libraries.get(params.id) }),
    route('POST /api/admin/libraries/:id/rescan', {
      handler: ({ params, set }) => {
        const library = libraries.get(params.id);
        scanInBackground(library.id);
        set.status = 202;
        return { message: `Scanning ${library.name}`, library: libraries.get(library.id) };
      },
    }),
    route('DELETE /api/admin/libraries/:id', { handler: ({ principal, params }) => libraries.remove(principal, params.id) }),
  ]);
}
