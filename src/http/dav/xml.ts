import { AppError, badRequest } from '../../errors.ts';
import { childElements, escapeXml, parseXml, XML_NS, type XmlElement, XmlError } from '../../lib/xml.ts';
import { type DavLock } from '../../services/dav/dav-locks.ts';
import { readXmlText } from '../body.ts';

export const DAV = 'DAV:';
export const OC = 'http://owncloud.org/ns';
export const NC = 'http://nextcloud.org/ns';
export const XML_TYPE = 'application/xml; charset=utf-8';
export const XML_HEAD = '<?xml version="1.0" encoding="utf-8"?>\n';

/** Live properties a PROPFIND `allprop` returns (RFC 4918 §15; the RFC 4331 quota ones only when named). */
export const ALLPROP = [
  'creationdate',
  'displayname',
  'getcontentlength',
  'getcontenttype',
  'getetag',
  'getlastmodified',
  'lockdiscovery',
  'resourcetype',
  'supportedlock',
];
/** RFC 6578's sync-token and RFC 3253's supported-report-set are live on collections, only when named. */
export const LIVE = new Set([...ALLPROP, 'quota-available-bytes', 'quota-used-bytes', 'sync-token', 'supported-report-set']);
/** The ownCloud and Nextcloud properties the Nextcloud clients ask for, answered from the tree (never stored as dead ones). */
const OC_LIVE = new Set(['fileid', 'id', 'permissions', 'size', 'checksums']);
const NC_LIVE = new Set(['has-preview']);
export const isLive = (ns: string, name: string) =>
  ns === DAV ? LIVE.has(name) : ns === OC ? OC_LIVE.has(name) : ns === NC ? NC_LIVE.has(name) : false;

const STATUS_TEXT: Record<number, string> = {
  200: 'OK',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  507: 'Insufficient Storage',
  424: 'Failed Dependency',
};
export const statusLine = (code: number) => `HTTP/1.1 ${code} ${STATUS_TEXT[code] ?? ''}`;

export function lockXml(lock: DavLock): string {
  return (
    `<D:activelock><D:locktype><D:write/></D:locktype><D:lockscope><D:${lock.scope}/></D:lockscope>` +
    `<D:depth>${lock.depth === 'infinity' ? 'infinity' : '0'}</D:depth>${lock.ownerXml ? `<D:owner${lock.ownerLang ? ` xml:lang="${escapeXml(lock.ownerLang)}"` : ''}>${lock.ownerXml}</D:owner>` : ''}` +
    `<D:timeout>Second-${Math.max(0, Math.round((lock.expiresAt - Date.now()) / 1000))}</D:timeout>` +
    `<D:locktoken><D:href>${escapeXml(lock.token)}</D:href></D:locktoken>` +
    `<D:lockroot><D:href>${escapeXml(lock.href)}</D:href></D:lockroot></D:activelock>`
  );
}

export const SUPPORTED_LOCK =
  '<D:lockentry><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockentry>' +
  '<D:lockentry><D:lockscope><D:shared/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockentry>';

export const SUPPORTED_REPORTS = '<D:supported-report><D:report><D:sync-collection/></D:report></D:supported-report>';

/** How every allprop answer ends: supportedlock, then the one propstat's status. */
export const ALLPROP_TAIL = `<D:supportedlock>${SUPPORTED_LOCK}</D:supportedlock></D:prop><D:status>${statusLine(200)}</D:status></D:propstat></D:response>`;

/** A property's identity: names never hold a newline, so the last one separates the two. */
export const propKey = (ns: string, name: string) => `${ns}\n${name}`;

/** The xml:lang in scope on an element, given the one in scope on its parent. */
export const langIn = (el: XmlElement, parentLang: string): string => el.attrs.get(`{${XML_NS}}lang`) ?? parentLang;

/** A property element with its value (or empty) and its xml:lang (a dead property's), in its own namespace. */
export function propXml(ns: string, name: string, value = '', lang: string | null = null): string {
  const langAttr = lang ? ` xml:lang="${escapeXml(lang)}"` : '';
  if (ns === DAV) return value ? `<D:${name}${langAttr}>${value}</D:${name}>` : `<D:${name}${langAttr}/>`;
  // Only the xml prefix may name the XML namespace: a client parsing with expat refuses a whole answer that binds another.
  if (ns === XML_NS) return value ? `<xml:${name}${langAttr}>${value}</xml:${name}>` : `<xml:${name}${langAttr}/>`;
  const open = (ns ? `x:${name} xmlns:x="${escapeXml(ns)}"` : `${name} xmlns=""`) + langAttr;
  const close = ns ? `x:${name}` : name;
  return value ? `<${open}>${value}</${close}>` : `<${open}/>`;
}

export function xmlResponse(status: number, body: string, headers: Record<string, string> = {}): Response {
  return new Response(XML_HEAD + body, { status, headers: { 'Content-Type': XML_TYPE, ...headers } });
}

/** A DAV:error with its condition element, holding the resource it names (`href`) where RFC 4918 §16 has one. */
export function davError(status: number, condition: string, message: string, href?: string): Response {
  const element = href ? `<D:${condition}><D:href>${escapeXml(href)}</D:href></D:${condition}>` : `<D:${condition}/>`;
  return xmlResponse(
    status,
    `<D:error xmlns:D="DAV:">${element}<D:responsedescription>${escapeXml(message)}</D:responsedescription></D:error>`,
  );
}

/** A refusal as Nextcloud's WebDAV (Sabre) writes one: the clients show its message to the user. */
export function sabreErrorXml(message: string): string {
  return `${XML_HEAD}<d:error xmlns:d="DAV:" xmlns:s="http://sabredav.org/ns"><s:message>${escapeXml(message)}</s:message></d:error>`;
}

export async function xmlBody(request: Request): Promise<XmlElement | null> {
  const text = await readXmlText(request);
  if (text.trim() === '') return null;
  try {
    return parseXml(text);
  } catch (err) {
    if (err instanceof XmlError && err.tooLarge) throw new AppError(413, `The XML body is too large to process: ${err.message}`);
    if (err instanceof XmlError) throw badRequest(`The XML body is malformed: ${err.message}`);
    throw err;
  }
}

export type PropName = { ns: string; name: string };
export type PropRequest = { kind: 'allprop'; include: PropName[] } | { kind: 'propname' } | { kind: 'prop'; names: PropName[] };

/**
 * What one PROPFIND may name (clients name tens): each name is answered, found or not, for every
 * resource listed, so names are capped in number and in characters (a long namespace can be named often).
 */
const PROPFIND_NAMES = { count: 1_000, characters: 64 * 1024 } as const;

/** The properties an element names; 413 past PROPFIND_NAMES. */
export function propNamesOf(el: XmlElement): PropName[] {
  const names = childElements(el).map((e) => ({ ns: e.ns, name: e.name }));
  const characters = names.reduce((sum, n) => sum + n.ns.length + n.name.length, 0);
  if (names.length > PROPFIND_NAMES.count || characters > PROPFIND_NAMES.characters) {
    const n = (x: number) => x.toLocaleString('en-US');
    throw new AppError(
      413,
      `A PROPFIND may name at most ${n(PROPFIND_NAMES.count)} properties, of ${n(PROPFIND_NAMES.characters)} characters of namespaces and names together; this one names ${n(names.length)} of ${n(characters)} characters`,
    );
  }
  return names;
}

export function propRequestOf(body: XmlElement | null): PropRequest {
  if (!body) return { kind: 'allprop', include: [] };
  if (body.ns !== DAV || body.name !== 'propfind') throw badRequest('A PROPFIND body must be a DAV:propfind element');
  const [first, ...rest] = childElements(body, DAV);
  if (first?.name === 'propname') return { kind: 'propname' };
  if (first?.name === 'prop') return { kind: 'prop', names: propNamesOf(first) };
  if (first?.name === 'allprop') {
    const include = rest.find((e) => e.name === 'include');
    return { kind: 'allprop', include: include ? propNamesOf(include) : [] };
  }
  throw badRequest('A PROPFIND body names prop, allprop or propname');
}

/** The text inside an element (its text children joined), trimmed. */
export function textOf(el: XmlElement | undefined): string {
  return el
    ? el.children
        .map((c) => (c.kind === 'text' ? c.text : ''))
        .join('')
        .trim()
    : '';
}

/** oc:id and OC-FileId: the numeric id zero-padded to eight digits, then the instance's id (as Nextcloud writes them). */
export const ocIdOf = (seq: number, instanceId: string) => `${String(seq).padStart(8, '0')}${instanceId}`;
