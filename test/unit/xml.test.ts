import { describe, expect, test } from 'bun:test';
import { childElements, parseXml, serializeNodes, XmlError } from '../../src/lib/xml.ts';

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
});
