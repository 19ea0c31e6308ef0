// What the trashbin and versions doors share: Depth, restore destinations, OPTIONS and 405.
import { badRequest, forbidden } from '../../errors.ts';
import { destinationUrl } from './paths.ts';

/** A PROPFIND's Depth on the trashbin and versions doors: 0 or 1 (the default); infinity is 403 there, as Nextcloud's. */
export function shallowDepth(request: Request, what: string): '0' | '1' {
  const depth = (request.headers.get('depth') ?? '1').trim().toLowerCase();
  if (depth === 'infinity') throw forbidden(`PROPFIND of ${what} takes Depth 0 or 1`);
  if (depth !== '0' && depth !== '1') throw badRequest('Depth must be 0, 1 or infinity');
  return depth;
}

/** Checks that a MOVE's Destination names something inside `<base>restore/` on this server, which is how the clients ask for a restore. */
export function requireRestoreDestination(request: Request, base: string, the: { what: string; example: string }): void {
  const url = destinationUrl(request, `MOVE needs a Destination header: ${base}restore/${the.example}`);
  const into = `${base}restore/`;
  if (!url.pathname.startsWith(into) || url.pathname.length === into.length)
    throw forbidden(`${the.what} is restored by a MOVE into ${into}<name>`);
}

/** OPTIONS on the trashbin and versions doors: class 1 DAV and the methods the door serves. */
export const doorOptions = (methods: string) => new Response(null, { headers: { DAV: '1', Allow: methods, 'Content-Length': '0' } });

/** A method the trashbin or versions door does not serve: 405 with the ones it does. */
export const methodNotServed = (method: string, where: string, methods: string) =>
  new Response(JSON.stringify({ message: `${method} is not served on ${where}` }), {
    status: 405,
    headers: { Allow: methods, 'Content-Type': 'application/json' },
  });
