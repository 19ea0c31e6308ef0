/** A parsed XML element with its namespace resolved (`ns` is '' for none). */
export interface XmlElement {
  kind: 'element';
  ns: string;
  name: string;
  /** Attributes other than namespace declarations, by `{ns}name` (`name` alone without a namespace). */
  attrs: Map<string, string>;
  children: XmlNode[];
}

interface XmlText {
  kind: 'text';
  text: string;
}

export type XmlNode = XmlElement | XmlText;

/** Malformed XML; `tooLarge` when the document is well formed so far but exceeds one of XML_LIMITS. */
export class XmlError extends Error {
  constructor(
    message: string,
    readonly tooLarge = false,
  ) {
    super(message);
  }
}

/**
 * Caps on one document: a WebDAV client's bodies hold tens of elements and a handful of namespaces;
 * these bound what a hostile one costs (memory, and the recursion of serializeNodes).
 */
export const XML_LIMITS = { elements: 50_000, attributes: 50_000, namespaceDeclarations: 1_000, depth: 400 } as const;

/** The namespace the `xml` prefix is bound to (xml:lang, xml:space), and no other prefix may be. */
export const XML_NS = 'http://www.w3.org/XML/1998/namespace';
const XMLNS_NS = 'http://www.w3.org/2000/xmlns/';
const NAME = /^[A-Za-z_\u00c0-\uffff][\w.\-\u00b7\u00c0-\uffff]*$/;
// Anything outside the Char production of XML 1.0 (§2.2): controls, lone surrogates, U+FFFE and U+FFFF.
const NOT_CHAR = /[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]/u;
const TAG_NAME = /[^\s/>]+/y;
const ATTRIBUTE = /([^\s=/>]+)\s*=\s*(?:"([^"<]*)"|'([^'<]*)')/y;
const SPACE = /\s*/y;

const ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

function charOf(cp: number): string {
  const c = cp <= 0x10ffff ? String.fromCodePoint(cp) : '';
  if (!c || NOT_CHAR.test(c))
    throw new XmlError(`character reference to U+${cp.toString(16).toUpperCase().padStart(4, '0')} (not allowed in XML)`);
  return c;
}

function decodeEntities(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(/&([^;&\s]*);?/g, (whole, ref: string) => {
    if (!whole.endsWith(';')) throw new XmlError('unterminated entity reference');
    if (ref.startsWith('#x') || ref.startsWith('#X')) {
      if (!/^[0-9a-fA-F]+$/.test(ref.slice(2))) throw new XmlError('bad character reference');
      return charOf(Number.parseInt(ref.slice(2), 16));
    }
    if (ref.startsWith('#')) {
      if (!/^\d+$/.test(ref.slice(1))) throw new XmlError('bad character reference');
      return charOf(Number(ref.slice(1)));
    }
    const value = ENTITIES[ref];
    if (value === undefined) throw new XmlError(`unknown entity &${ref};`);
    return value;
  });
}

/**
 * A small namespace-aware XML parser for WebDAV request bodies: elements, attributes, text, CDATA,
 * comments and processing instructions. A DOCTYPE is refused (no entity expansion, so no XXE or
 * billion-laughs); malformed input, characters outside XML's, an undeclared prefix or an empty prefixed
 * declaration throw XmlError, and so does a document past XML_LIMITS. Linear in the input's length.
 * `formerXmlBindings` accepts another prefix (or the default) bound to the XML namespace, as values
 * stored by earlier versions have (see fromFormerXmlBindings).
 */
export function parseXml(source: string, options: { formerXmlBindings?: boolean } = {}): XmlElement {
  let i = 0;
  // XML 1.0 §2.11: every line break is read as \n (a &#13; still gives \r, which serializeNodes writes back as one).
  const s = (source.charCodeAt(0) === 0xfeff ? source.slice(1) : source).replace(/\r\n?/g, '\n');
  const stack: Array<{ el: XmlElement; qname: string; declared: string[] }> = [];
  let root: XmlElement | null = null;
  // Each prefix ('' for the default namespace) to its bindings, innermost last: a declaration is pushed
  // when its element opens and popped when it closes, so no element copies its scope.
  const bindings = new Map<string, string[]>([['xml', [XML_NS]]]);
  let elements = 0;
  let attributes = 0;
  let declarations = 0;

  const fail = (what: string): never => {
    throw new XmlError(`${what} at offset ${i}`);
  };
  const tooLarge = (what: string, limit: number): never => {
    throw new XmlError(`more than ${limit.toLocaleString('en-US')} ${what}`, true);
  };
  const undeclare = (prefixes: string[]) => {
    for (const prefix of prefixes) bindings.get(prefix)!.pop();
  };
  const addText = (text: string) => {
    const top = stack.at(-1);
    if (!top) {
      if (text.trim() !== '') fail('text outside the root element');
      return;
    }
    const last = top.el.children.at(-1);
    if (last?.kind === 'text') last.text += text;
    else top.el.children.push({ kind: 'text', text });
  };
  const resolve = (q: string, isAttr: boolean): { ns: string; local: string } => {
    const colon = q.indexOf(':');
    const prefix = colon < 0 ? '' : q.slice(0, colon);
    const local = colon < 0 ? q : q.slice(colon + 1);
    if (!NAME.test(local) || (prefix && !NAME.test(prefix))) fail(`bad name ${q}`);
    if (!prefix && isAttr) return { ns: '', local };
    const ns = bindings.get(prefix)?.at(-1);
    if (ns === undefined && prefix) fail(`undeclared prefix ${prefix}`);
    return { ns: ns ?? '', local };
  };

  const bad = NOT_CHAR.exec(s);
  if (bad) {
    i = bad.index;
    fail(`character U+${bad[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')} (not allowed in XML)`);
  }
  while (i < s.length) {
    const lt = s.indexOf('<', i);
    if (lt < 0) {
      addText(decodeEntities(s.slice(i)));
      break;
    }
    if (lt > i) addText(decodeEntities(s.slice(i, lt)));
    i = lt;
    if (s.startsWith('<!--', i)) {
      const end = s.indexOf('-->', i + 4);
      if (end < 0) fail('unterminated comment');
      i = end + 3;
    } else if (s.startsWith('<![CDATA[', i)) {
      const end = s.indexOf(']]>', i + 9);
      if (end < 0 || stack.length === 0) fail('bad CDATA section');
      addText(s.slice(i + 9, end));
      i = end + 3;
    } else if (s.startsWith('<?', i)) {
      const end = s.indexOf('?>', i + 2);
      if (end < 0) fail('unterminated processing instruction');
      i = end + 2;
    } else if (s.startsWith('<!', i)) {
      fail('DOCTYPE and declarations are not accepted');
    } else if (s.startsWith('</', i)) {
      const end = s.indexOf('>', i);
      if (end < 0) fail('unterminated end tag');
      const qname = s.slice(i + 2, end).trim();
      const top = stack.pop();
      if (!top || top.qname !== qname) fail(`mismatched end tag </${qname}>`);
      undeclare(top!.declared);
      i = end + 1;
    } else {
      if (root && stack.length === 0) fail('content after the root element');
      if (++elements > XML_LIMITS.elements) tooLarge('elements', XML_LIMITS.elements);
      if (stack.length >= XML_LIMITS.depth) tooLarge('levels of nested elements', XML_LIMITS.depth);
      // Start tag: name, attributes (quoted values may hold '>'), then '>' or '/>'.
      TAG_NAME.lastIndex = i + 1;
      const qname = TAG_NAME.exec(s)?.[0];
      if (!qname) fail('bad start tag');
      let j = i + 1 + qname!.length;
      const rawAttrs: Array<[string, string]> = [];
      let selfClosing = false;
      for (;;) {
        SPACE.lastIndex = j;
        SPACE.exec(s);
        j = SPACE.lastIndex;
        if (j >= s.length) fail('unterminated start tag');
        if (s[j] === '>') {
          j++;
          break;
        }
        if (s.startsWith('/>', j)) {
          selfClosing = true;
          j += 2;
          break;
        }
        ATTRIBUTE.lastIndex = j;
        const m = ATTRIBUTE.exec(s);
        if (!m) fail('bad attribute');
        if (++attributes > XML_LIMITS.attributes) tooLarge('attributes', XML_LIMITS.attributes);
        // §3.3.3: a tab or line break written in a value is a space; one given as a character reference is kept.
        rawAttrs.push([m![1]!, decodeEntities((m![2] ?? m![3] ?? '').replace(/[\t\n]/g, ' '))]);
        j = ATTRIBUTE.lastIndex;
      }
      const declared: string[] = [];
      for (const [k, v] of rawAttrs) {
        if (k !== 'xmlns' && !k.startsWith('xmlns:')) continue;
        if (++declarations > XML_LIMITS.namespaceDeclarations) tooLarge('namespace declarations', XML_LIMITS.namespaceDeclarations);
        const prefix = k === 'xmlns' ? '' : k.slice(6);
        if (declared.includes(prefix)) fail(`duplicate attribute ${k}`);
        // Namespaces in XML 1.0: a prefix cannot be bound to the empty name.
        if (prefix && v === '') fail(`empty namespace for prefix ${prefix}`);
        // §3: xml is bound to its namespace alone, xmlns is never declared (strict parsers such as expat refuse either).
        const otherXml = prefix !== 'xml' && v === XML_NS && !options.formerXmlBindings;
        if (prefix === 'xmlns' || v === XMLNS_NS || (prefix === 'xml' && v !== XML_NS) || otherXml)
          fail(`reserved namespace or prefix in ${k}`);
        const bound = bindings.get(prefix);
        if (bound) bound.push(v);
        else bindings.set(prefix, [v]);
        declared.push(prefix);
      }
      const { ns, local } = resolve(qname!, false);
      const attrs = new Map<string, string>();
      for (const [k, v] of rawAttrs) {
        if (k === 'xmlns' || k.startsWith('xmlns:')) continue;
        const a = resolve(k, true);
        const key = a.ns ? `{${a.ns}}${a.local}` : a.local;
        // XML 1.0 §3.1 and Namespaces §6.3: one attribute per name; keeping the last would drop a value that was sent.
        if (attrs.has(key)) fail(`duplicate attribute ${k}`);
        attrs.set(key, v);
      }
      const el: XmlElement = { kind: 'element', ns, name: local, attrs, children: [] };
      const parent = stack.at(-1);
      if (parent) parent.el.children.push(el);
      else root = el;
      if (selfClosing) undeclare(declared);
      else stack.push({ el, qname: qname!, declared });
      i = j;
    }
  }
  if (stack.length > 0) fail('unclosed element');
  if (!root) throw new XmlError('no root element');
  return root;
}

/** Child elements of `el`, optionally only those in `ns` named `name`. */
export function childElements(el: XmlElement, ns?: string, name?: string): XmlElement[] {
  return el.children.filter(
    (c): c is XmlElement => c.kind === 'element' && (ns === undefined || c.ns === ns) && (name === undefined || c.name === name),
  );
}

// Besides markup, what XML 1.0 cannot hold (its Char production): C0 controls but tab, LF and CR, U+FFFE, U+FFFF and
// half surrogates. Rows stored before these were refused on input may still hold them.
const NEEDS_ESCAPE = /[<>&"'\u0000-\u0008\u000b\u000c\u000e-\u001f\ud800-\udfff\ufffe\uffff]/;

/** Text for XML: markup as entities, and each character XML 1.0 cannot hold as U+FFFD, so a reader never refuses the answer. */
export function escapeXml(text: string): string {
  // Most names need no escaping: a PROPFIND of 10,000 items calls this 50,000 times.
  if (!NEEDS_ESCAPE.test(text)) return text;
  // One pass by character code: every ETag has quotes, and a replace with a callback took twice as long.
  let out = '';
  let last = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    let entity = c === 38 ? '&amp;' : c === 60 ? '&lt;' : c === 62 ? '&gt;' : c === 34 ? '&quot;' : c === 39 ? '&apos;' : null;
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      // A whole pair (an emoji) stays.
      if (next >= 0xdc00 && next <= 0xdfff) {
        i++;
        continue;
      }
    }
    if ((c < 0x20 && c !== 9 && c !== 10 && c !== 13) || (c >= 0xd800 && c <= 0xdfff) || c === 0xfffe || c === 0xffff) entity = '\ufffd';
    if (entity === null) continue;
    out += text.slice(last, i) + entity;
    last = i + 1;
  }
  return out + text.slice(last);
}

/** escapeXml of text in double quotes (every ETag): the quotes written as entities, only the inside scanned. */
export function escapeQuotedXml(text: string): string {
  const n = text.length;
  if (n < 2 || text.charCodeAt(0) !== 34 || text.charCodeAt(n - 1) !== 34) return escapeXml(text);
  return `&quot;${escapeXml(text.slice(1, n - 1))}&quot;`;
}

/** An attribute value escaped, its tabs and line breaks as references: written as they are, a reader takes them for spaces. */
const attrValue = (value: string) => escapeXml(value).replace(/[\t\n\r]/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * Nodes back to text, each element declaring its own namespace as the default (and a prefix per
 * namespaced attribute), so the result stands alone wherever it is placed; the XML namespace keeps its
 * own `xml` prefix (xml:lang), which nothing may declare.
 */
export function serializeNodes(nodes: readonly XmlNode[], parentNs = ''): string {
  let out = '';
  for (const node of nodes) {
    if (node.kind === 'text') {
      out += escapeXml(node.text).replace(/\r/g, '&#13;');
      continue;
    }
    const inXml = node.ns === XML_NS;
    const name = inXml ? `xml:${node.name}` : node.name;
    let open = name;
    if (!inXml && node.ns !== parentNs) open += ` xmlns="${escapeXml(node.ns)}"`;
    let n = 0;
    for (const [key, value] of node.attrs) {
      const m = /^\{(.*)\}(.*)$/.exec(key);
      if (m?.[1] === XML_NS) open += ` xml:${m[2]}="${attrValue(value)}"`;
      else if (m) {
        open += ` xmlns:a${n}="${escapeXml(m[1]!)}" a${n}:${m[2]}="${attrValue(value)}"`;
        n++;
      } else open += ` ${key}="${attrValue(value)}"`;
    }
    const inner = inXml ? parentNs : node.ns;
    out += node.children.length ? `<${open}>${serializeNodes(node.children, inner)}</${name}>` : `<${open}/>`;
  }
  return out;
}

/**
 * Serialized nodes as an earlier Coffer stored them (the XML namespace bound to a made-up prefix, xmlns:a0
 * and a0:lang, or as an element's default), rewritten as serializeNodes writes them now; others unchanged.
 */
export function fromFormerXmlBindings(stored: string): string {
  // Only a value naming the XML namespace can hold such a binding; the rest (nearly all) are not parsed.
  if (!stored.includes(XML_NS)) return stored;
  try {
    return serializeNodes(parseXml(`<v>${stored}</v>`, { formerXmlBindings: true }).children);
  } catch (err) {
    // A value stored before the parser refused some characters is kept as it was, not made a failed upgrade.
    if (err instanceof XmlError) return stored;
    throw err;
  }
}
