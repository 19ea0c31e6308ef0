import type { Database } from 'bun:sqlite';
import { fromFormerXmlBindings, XML_NS } from '../lib/xml.ts';

interface PropertyRow {
  itemId: string;
  ns: string;
  name: string;
  value: string;
}

/** Migration 0045: dead-property values stored with the XML namespace under another prefix, rewritten as serializeNodes writes them now. */
export function formerXmlBindingsRewritten(sqlite: Database): void {
  const rows = sqlite
    .query<PropertyRow, [string]>('SELECT item_id AS itemId, ns, name, value FROM dav_properties WHERE instr(value, ?) > 0')
    .all(XML_NS);
  const update = sqlite.query('UPDATE dav_properties SET value = ? WHERE item_id = ? AND ns = ? AND name = ?');
  for (const row of rows) {
    const value = fromFormerXmlBindings(row.value);
    if (value !== row.value) update.run(value, row.itemId, row.ns, row.name);
  }
}
