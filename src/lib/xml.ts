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

export class XmlError extends Error {}

const XML_NS = 'http://www.w3.org/XML/1998/namespace';
const NAME = /^[A-Za-z_\u00c0-\uffff][\w.\-\u00b7\u00c0-\uffff]*$/;

const ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

function decodeEntities(text: string): string {
  return text.replace(/&([^;&\s]*);?/g, (whole, ref: string) => {
    if (!whole.endsWith(';')) throw new XmlError('unterminated entity reference');
    if (ref.startsWith('#x') || ref.startsWith('#X')) {
      const cp = Number.parseInt(ref.slice(2), 16);
      if (!/^[0-9a-fA-F]+$/.test(ref.slice(2)) || cp > 0x10ffff) throw new XmlError('bad character reference');
      return String.fromCodePoint(cp);
    }
    if (ref.startsWith('#')) {
      const cp = Number(ref.slice(1));
      if (!/^\d+$/.test(ref.slice(1)) || cp > 0x10ffff) throw new XmlError('bad character reference');
      return String.fromCodePoint(cp);
    }
    const value = ENTITIES[ref];
    if (value === undefined) throw new XmlError(`unknown entity &${ref};`);
    return value;
  });
}

/**
 * A small namespace-aware XML parser for WebDAV request bodies: elements, attributes, text, CDATA,
 * comments and processing instructions. A DOCTYPE is refused (no entity expansion, so no XXE or
 * billion-laughs); malformed input, an undeclared prefix or an empty prefixed declaration throw XmlError.
 */
export function parseXml(source: string): XmlElement {
  let i = 0;
  const s = source.charCodeAt(0) === 0xfeff ? source.slice(1) : source;
  const stack: Array<{ el: XmlElement; qname: string; scope: Map<string, string> }> = [];
  let root: XmlElement | null = null;
  let scope = new Map<string, string>([['xml', XML_NS]]);

  const fail = (what: string): never => {
    throw new XmlError(`${what} at offset ${i}`);
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
      scope = stack.at(-1)?.scope ?? new Map([['xml', XML_NS]]);
      i = end + 1;
    } else {
      if (root && stack.length === 0) fail('content after the root element');
      // Start tag: name, attributes (quoted values may hold '>'), then '>' or '/>'.
      let j = i + 1;
      const nameMatch = /^[^\s/>]+/.exec(s.slice(j, j + 512));
      if (!nameMatch) fail('bad start tag');
      const qname = nameMatch![0];
      j += qname.length;
      const rawAttrs: Array<[string, string]> = [];
      let selfClosing = false;
      for (;;) {
        while (j < s.length && /\s/.test(s[j]!)) j++;
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
        const m = /^([^\s=/>]+)\s*=\s*("([^"<]*)"|'([^'<]*)')/.exec(s.slice(j, j + 65536));
        if (!m) fail('bad attribute');
        rawAttrs.push([m![1]!, decodeEntities(m![3] ?? m![4] ?? '')]);
        j += m![0].length;
      }
      const own = new Map(scope);
      for (const [k, v] of rawAttrs) {
        if (k === 'xmlns') own.set('', v);
        else if (k.startsWith('xmlns:')) {
          // Namespaces in XML 1.0: a prefix cannot be bound to the empty name.
          if (v === '') fail(`empty namespace for prefix ${k.slice(6)}`);
          own.set(k.slice(6), v);
        }
      }
      const resolve = (q: string, isAttr: boolean): { ns: string; local: string } => {
        const colon = q.indexOf(':');
        const prefix = colon < 0 ? '' : q.slice(0, colon);
        const local = colon < 0 ? q : q.slice(colon + 1);
        if (!NAME.test(local) || (prefix && !NAME.test(prefix))) fail(`bad name ${q}`);
        if (!prefix) return { ns: isAttr ? '' : (own.get('') ?? ''), local };
        const ns = own.get(prefix);
        if (ns === undefined) fail(`undeclared prefix ${prefix}`);
        return { ns: ns!, local };
      };
      const { ns, local } = resolve(qname, false);
      const attrs = new Map<string, string>();
      for (const [k, v] of rawAttrs) {
        if (k === 'xmlns' || k.startsWith('xmlns:')) continue;
        const a = resolve(k, true);
        attrs.set(a.ns ? `{${a.ns}}${a.local}` : a.local, v);
      }
      const el: XmlElement = { kind: 'element', ns, name: local, attrs, children: [] };
      const parent = stack.at(-1);
      if (parent) parent.el.children.push(el);
      else root = el;
      if (!selfClosing) {
        stack.push({ el, qname, scope: own });
        scope = own;
      }
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

export function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => `&${{ '<': 'lt', '>': 'gt', '&': 'amp', '"': 'quot', "'": 'apos' }[c]};`);
}

/**
 * Nodes back to text, each element declaring its own namespace as the default (and a prefix per
 * namespaced attribute), so the result stands alone wherever it is placed.
 */
export function serializeNodes(nodes: readonly XmlNode[], parentNs = ''): string {
  let out = '';
  for (const node of nodes) {
    if (node.kind === 'text') {
      out += escapeXml(node.text);
      continue;
    }
    let open = node.name;
    if (node.ns !== parentNs) open += ` xmlns="${escapeXml(node.ns)}"`;
    let n = 0;
    for (const [key, value] of node.attrs) {
      const m = /^\{(.*)\}(.*)$/.exec(key);
      if (m) {
        open += ` xmlns:a${n}="${escapeXml(m[1]!)}" a${n}:${m[2]}="${escapeXml(value)}"`;
        n++;
      } else open += ` ${key}="${escapeXml(value)}"`;
    }
    out += node.children.length ? `<${open}>${serializeNodes(node.children, node.ns)}</${node.name}>` : `<${open}/>`;
  }
  return out;
}
