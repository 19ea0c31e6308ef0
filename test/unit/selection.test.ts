import { describe, expect, test } from 'bun:test';
import { createSelection, prune } from '../../web/ui/selection.ts';

const items = ['a', 'b', 'c', 'd', 'e'].map((id) => ({ id }));
const plain = { shiftKey: false, ctrlKey: false, metaKey: false };
const shift = { ...plain, shiftKey: true };
const ctrl = { ...plain, ctrlKey: true };

function fresh() {
  const s = createSelection<{ id: string }>();
  s.items = items;
  return s;
}
const ids = (s: ReturnType<typeof fresh>) => [...s.ids.value].sort();

describe('selection model (web/ui/selection.ts)', () => {
  test('only selects one item, focuses it and anchors a range there', () => {
    const s = fresh();
    s.only(1);
    expect(ids(s)).toEqual(['b']);
    expect(s.focus.value).toBe(1);
    s.range(3);
    expect(ids(s)).toEqual(['b', 'c', 'd']);
    // A range replaces the selection and runs either way from the anchor.
    s.range(0);
    expect(ids(s)).toEqual(['a', 'b']);
  });

  test('toggle adds and removes and moves the anchor, unless told not to (Ctrl+Space)', () => {
    const s = fresh();
    s.toggle(0);
    s.toggle(2);
    expect(ids(s)).toEqual(['a', 'c']);
    expect(s.anchor).toBe(2);
    s.toggle(0, false);
    expect(ids(s)).toEqual(['c']);
    expect(s.anchor).toBe(2);
  });

  test('keyboard movement: plain selects the item moved to, Shift extends from the anchor, Ctrl moves the focus only', () => {
    const s = fresh();
    s.move(1, plain);
    expect(ids(s)).toEqual(['b']);
    s.move(3, shift);
    expect(ids(s)).toEqual(['b', 'c', 'd']);
    expect(s.focus.value).toBe(3);
    s.move(4, ctrl);
    expect(ids(s)).toEqual(['b', 'c', 'd']);
    expect(s.focus.value).toBe(4);
    // Past either end the focus stops at the last or first item.
    expect(s.move(99, plain)).toBe(4);
    expect(s.move(-5, plain)).toBe(0);
    expect(ids(s)).toEqual(['a']);
  });

  test('all, set, clear and picked keep the list order', () => {
    const s = fresh();
    s.all();
    expect(ids(s)).toEqual(['a', 'b', 'c', 'd', 'e']);
    s.set(['d', 'b']);
    expect(s.picked().map((i) => i.id)).toEqual(['b', 'd']);
    expect(s.focus.value).toBe(3);
    s.clear();
    expect(s.picked()).toEqual([]);
  });

  test('items no longer listed leave the selection; the focus stays inside the list', () => {
    const s = fresh();
    s.set(['b', 'e']);
    s.focus.value = 4;
    const shorter = items.slice(0, 3);
    s.items = shorter;
    prune(s, shorter);
    expect(ids(s)).toEqual(['b']);
    expect(s.focus.value).toBe(2);
  });
});
