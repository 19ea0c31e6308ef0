import { escapeXml } from '../../lib/xml.ts';
import { DAV, type PropName, type PropRequest, propXml, statusLine } from './xml.ts';

/** A property's value by namespace and name; undefined where the resource has none. */
export type PropValue = (ns: string, name: string) => string | undefined;

/** One response element: the found properties (`all` for allprop), and with a named list, the missing ones as 404. */
export function responseXml(href: string, want: PropRequest, all: readonly PropName[], value: PropValue): string {
  const names = want.kind === 'prop' ? want.names : all;
  let found = '';
  let missing = '';
  for (const { ns, name } of names) {
    const v = value(ns, name);
    if (v !== undefined) found += want.kind === 'propname' ? propXml(ns, name) : propXml(ns, name, v);
    else if (want.kind === 'prop') missing += propXml(ns, name);
  }
  let out = `<D:response><D:href>${escapeXml(href)}</D:href>`;
  if (found || !missing) out += `<D:propstat><D:prop>${found}</D:prop><D:status>${statusLine(200)}</D:status></D:propstat>`;
  if (missing) out += `<D:propstat><D:prop>${missing}</D:prop><D:status>${statusLine(404)}</D:status></D:propstat>`;
  return `${out}</D:response>`;
}

/** The properties of a plain collection: it is one, and its name. */
export const collectionValue =
  (displayName: string): PropValue =>
  (ns, name) =>
    ns === DAV && name === 'resourcetype' ? '<D:collection/>' : ns === DAV && name === 'displayname' ? escapeXml(displayName) : undefined;

/** A streamed multistatus: `first` (the collection), then the entries a page at a time. */
export function multistatus(first: string, pages: AsyncGenerator<string[]> | null): Response {
  const encoder = new TextEncoder();
  let started = false;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!started) {
        started = true;
        controller.enqueue(encoder.encode(`<?xml version="1.0" encoding="utf-8"?>\n<D:multistatus xmlns:D="DAV:">${first}`));
        return;
      }
      const next = pages ? await pages.next() : { done: true as const, value: undefined };
      if (next.done) {
        controller.enqueue(encoder.encode('</D:multistatus>'));
        controller.close();
      } else controller.enqueue(encoder.encode(next.value.join('')));
    },
    async cancel() {
      await pages?.return(undefined);
    },
  });
  return new Response(body, { status: 207, headers: { 'Content-Type': 'application/xml; charset=utf-8' } });
}
