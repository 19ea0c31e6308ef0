import { describe, expect, test } from 'bun:test';
import { childElements, escapeQuotedXml, escapeXml, parseXml, serializeNodes, XML_LIMITS, XmlError } from '../../src/lib/xml.ts';

describe('lib/xml', () => {
  test('resolves prefixes and default namespaces, decodes entities and CDATA', () => {
    const root = parseXml(
      '<?xml version="1.0"?>\n<D:propfind xmlns:D="DAV:" xmlns="urn:x"><D:prop><a>x &amp; &#x1F600; <![CDATA[<raw>]]></a><b xmlns=""/></D:prop></D:propfind>',
    );
    expect([root.ns, root.name]).toEqual(['DAV:', 'propfind']);
    const [prop] = childElements(root, 'DAV:', 'prop');
    const [a, b] = childElements(prop!);
    expect([a!.ns, a!.name, b!.ns]).toEqual(['urn:x', 'a', '']);
    expect(a!.children).toEqual([{ kind: 'text', text: 'x & 😀 <raw>' }]);
  });

  test('refuses a DOCTYPE (no entity expansion), undeclared prefixes, empty prefixed declarations and malformed input', () => {
    for (const bad of [
      '<!DOCTYPE x [<!ENTITY a "aaaa">]><x>&a;</x>',
      '<y:x/>',
      '<x xmlns:y=""/>',
      '<x><y></x>',
      '<x>&unknown;</x>',
      '<x/><y/>',
      '',
      // Namespaces in XML §3: reserved prefixes and names, as expat refuses them.
      '<x xmlns:l="http://www.w3.org/XML/1998/namespace"/>',
      '<x xmlns="http://www.w3.org/XML/1998/namespace"/>',
      '<x xmlns:xml="urn:other"/>',
      '<x xmlns:xmlns="urn:x"/>',
      '<x xmlns:n="http://www.w3.org/2000/xmlns/"/>',
    ])
      expect(() => parseXml(bad)).toThrow(XmlError);
  });

  test('serialized nodes declare their own namespaces, so a value stands alone anywhere', () => {
    const root = parseXml('<p:v xmlns:p="urn:p"><p:inner q:attr="1" xmlns:q="urn:q">t&lt;</p:inner><plain/></p:v>');
    const text = serializeNodes(root.children);
    expect(text).toBe('<inner xmlns="urn:p" xmlns:a0="urn:q" a0:attr="1">t&lt;</inner><plain/>');
    const again = parseXml(`<wrap>${text}</wrap>`);
    expect(childElements(again).map((e) => [e.ns, e.name])).toEqual([
      ['urn:p', 'inner'],
      ['', 'plain'],
    ]);
  });

  test('xml:lang and other attributes and elements of the XML namespace are written with the xml prefix, which nothing declares', () => {
    const root = parseXml(
      '<v xmlns:xml="http://www.w3.org/XML/1998/namespace"><t xml:lang="fr" xml:space="preserve">a<xml:odd>b</xml:odd></t></v>',
    );
    const text = serializeNodes(root.children);
    expect(text).toBe('<t xml:lang="fr" xml:space="preserve">a<xml:odd>b</xml:odd></t>');
    expect(childElements(parseXml(`<wrap>${text}</wrap>`))[0]!.attrs.get('{http://www.w3.org/XML/1998/namespace}lang')).toBe('fr');
  });

  test('a document past a limit (elements, attributes, namespace declarations, depth) is refused as too large', () => {
    const tooLarge = (body: string) => {
      try {
        parseXml(body);
      } catch (err) {
        return err instanceof XmlError && err.tooLarge ? err.message : `not tooLarge: ${err}`;
      }
      return 'parsed';
    };
    const { elements, attributes, namespaceDeclarations, depth } = XML_LIMITS;
    expect(tooLarge(`<a>${'<b/>'.repeat(elements)}</a>`)).toBe('more than 50,000 elements');
    expect(tooLarge(`<a>${'<b/>'.repeat(elements - 1)}</a>`)).toBe('parsed');
    expect(tooLarge(`<a>${'<b x="1" y="2"/>'.repeat(attributes / 2 + 1)}</a>`)).toBe('more than 50,000 attributes');
    const flood = (n: number) => `<a ${Array.from({ length: n }, (_, i) => `xmlns:p${i}="urn:${i}"`).join(' ')}/>`;
    expect(tooLarge(flood(namespaceDeclarations + 1))).toBe('more than 1,000 namespace declarations');
    expect(tooLarge(flood(namespaceDeclarations))).toBe('parsed');
    const nested = (n: number) => `${'<v>'.repeat(n)}${'</v>'.repeat(n)}`;
    expect(tooLarge(nested(depth + 1))).toBe('more than 400 levels of nested elements');
    expect(tooLarge(nested(depth))).toBe('parsed');
  });

  test('refuses characters XML does not allow, written or referenced (XML 1.0 Char)', () => {
    for (const bad of [
      '<x>&#xD800;</x>',
      '<x>&#0;</x>',
      '<x>&#x1;</x>',
      '<x a="&#xFFFE;"/>',
      '<x>&#x110000;</x>',
      '<x>&#99999999999999999999999;</x>',
      '<x>\u0000</x>',
      '<x>\u0008</x>',
      '<x>\ud800</x>',
    ])
      expect(() => parseXml(bad)).toThrow(XmlError);
    expect(parseXml('<x>&#x00000041;&#0000066;</x>').children).toEqual([{ kind: 'text', text: 'AB' }]);
    expect(parseXml('<x>&#9;&#xA;&#xD;&#x20;&#xD7FF;&#xE000;&#xFFFD;&#x10000;&#x10FFFF;</x>').children).toEqual([
      { kind: 'text', text: '\t\n\r \ud7ff\ue000\ufffd\u{10000}\u{10ffff}' },
    ]);
  });
});

test('escapeXml escapes each of the five characters wherever they stand and returns other text as it is', () => {
  expect(escapeXml(`a<b>c&d"e'f`)).toBe('a&lt;b&gt;c&amp;d&quot;e&apos;f');
  expect(escapeXml('&&')).toBe('&amp;&amp;');
  expect(escapeXml('photo 00001.jpg')).toBe('photo 00001.jpg');
  expect(escapeXml(`<${'é名🎉'.repeat(3)}>'"`)).toBe(`&lt;${'é名🎉'.repeat(3)}&gt;&apos;&quot;`);
  expect(escapeXml(`"${'x'.repeat(100_000)}"`)).toBe(`&quot;${'x'.repeat(100_000)}&quot;`);
});

test('escapeXml writes each character XML 1.0 cannot hold as U+FFFD: U+FFFE, U+FFFF, half surrogates, C0 controls but tab, LF, CR', () => {
  expect(escapeXml('a\ufffeb\uffffc')).toBe('a\ufffdb\ufffdc');
  expect(escapeXml('\u0000\u0001\u0008\u000b\u000c\u000e\u001f<')).toBe(`${'\ufffd'.repeat(7)}&lt;`);
  expect(escapeXml('keep\t\n\r\u007f')).toBe('keep\t\n\r\u007f');
  // Half an emoji, at either end or alone; a whole one stays.
  expect(escapeXml('\ud83d')).toBe('\ufffd');
  expect(escapeXml('a\ude00b\ud83d')).toBe('a\ufffdb\ufffd');
  expect(escapeXml('\ud83d\ud83d\ude00\ude00')).toBe('\ufffd\ud83d\ude00\ufffd');
  expect(escapeXml('🎉&🎉')).toBe('🎉&amp;🎉');
  expect(escapeQuotedXml('"x\ufffe"')).toBe('&quot;x\ufffd&quot;');
  // What it writes, an XML reader takes.
  const text = 'n\u0001\ufffe\uffff\ud800&\udfff';
  expect(parseXml(`<a>${escapeXml(text)}</a>`).children).toEqual([{ kind: 'text', text: 'n\ufffd\ufffd\ufffd\ufffd&\ufffd' }]);
});

test('escapeQuotedXml answers exactly what escapeXml does, quoted or not', () => {
  const inner = ['', 'abc-123', `a<b>c&d"e'f`, '"', '""', 'é名🎉', `'`];
  const texts = inner.flatMap((t) => [t, `"${t}"`, `"${t}`, `${t}"`, `'${t}'`]);
  for (const text of texts) expect(escapeQuotedXml(text)).toBe(escapeXml(text));
  expect(escapeQuotedXml('"0190-objects/ab-42"')).toBe('&quot;0190-objects/ab-42&quot;');
});
