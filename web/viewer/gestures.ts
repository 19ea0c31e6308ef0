/** Where a picture sits: its scale over the fitted size and its offset from the stage's middle, in pixels. */
export interface View {
  scale: number;
  x: number;
  y: number;
}

interface Handlers {
  /** Zooms by a factor (0: back to fitted) around a point given from the stage's middle. */
  zoom: (factor: number, cx?: number, cy?: number) => void;
  /** Shows the view after a pan or pinch changed it. */
  apply: () => void;
  onSwipe: (dir: 1 | -1) => void;
}

// A swipe is a horizontal move of this many pixels at the fitted size; two taps this close make a double-tap.
const SWIPE_PX = 60;
const DOUBLE_TAP_MS = 300;
const TAP_SLOP_PX = 10;
const DOUBLE_ZOOM = 2.5;

/**
 * The stage's gestures on `el`: wheel zoom, double-click and double-tap, one-finger (or mouse) pan when
 * zoomed and swipe when not, two-finger pinch. Returns what removes them.
 */
export function attachGestures(el: HTMLElement, v: View, h: Handlers): () => void {
  const pointers = new Map<number, { x: number; y: number }>();
  let gesture: { dist: number; scale: number; startX: number; startY: number; moved: boolean } | null = null;
  let lastTap = 0;
  let lastPointer = '';
  const fromMiddle = (clientX: number, clientY: number) => {
    const r = el.getBoundingClientRect();
    return [clientX - (r.left + r.width / 2), clientY - (r.top + r.height / 2)] as const;
  };
  const spread = () => {
    const [a, b] = [...pointers.values()];
    return a && b ? Math.hypot(a.x - b.x, a.y - b.y) : 0;
  };
  const toggle = (clientX: number, clientY: number) => (v.scale > 1 ? h.zoom(0) : h.zoom(DOUBLE_ZOOM, ...fromMiddle(clientX, clientY)));

  const wheel = (e: WheelEvent) => {
    e.preventDefault();
    // Trackpads send many small deltas, a mouse wheel few large ones: the factor follows the delta.
    h.zoom(Math.exp(-Math.max(-100, Math.min(100, e.deltaY)) / 300), ...fromMiddle(e.clientX, e.clientY));
  };
  // A touch screen may also send dblclick for two taps: the double-tap below has them already.
  const dblclick = (e: MouseEvent) => lastPointer !== 'touch' && toggle(e.clientX, e.clientY);
  const down = (e: PointerEvent) => {
    lastPointer = e.pointerType;
    el.setPointerCapture(e.pointerId);
    pointers.set(e.pointerId, { x: e.clientX, y: e.clientY });
    gesture = { dist: spread(), scale: v.scale, startX: e.clientX, startY: e.clientY, moved: false };
  };
  const move = (e: PointerEvent) => {
    const prev = pointers.get(e.pointerId);
    if (!prev || !gesture) return;
    pointers.set(e.pointerId, { x: e.clientX, y: e.clientY });
    if (pointers.size === 2 && gesture.dist) {
      v.scale = Math.min(8, Math.max(1, (gesture.scale * spread()) / gesture.dist));
      if (v.scale === 1) v.x = v.y = 0;
    } else if (v.scale > 1) {
      v.x += e.clientX - prev.x;
      v.y += e.clientY - prev.y;
    }
    if (Math.hypot(e.clientX - gesture.startX, e.clientY - gesture.startY) > TAP_SLOP_PX) gesture.moved = true;
    h.apply();
  };
  const up = (e: PointerEvent) => {
    const g = gesture;
    const many = pointers.size > 1;
    pointers.delete(e.pointerId);
    if (!g || pointers.size > 0) return;
    gesture = null;
    const dx = e.clientX - g.startX;
    if (v.scale === 1 && !many && Math.abs(dx) > SWIPE_PX) return h.onSwipe(dx < 0 ? 1 : -1);
    // A mouse has dblclick; a finger gets its double-tap here.
    if (e.pointerType !== 'touch' || g.moved || many) return;
    if (e.timeStamp - lastTap < DOUBLE_TAP_MS) {
      lastTap = 0;
      toggle(e.clientX, e.clientY);
    } else lastTap = e.timeStamp;
  };
  el.addEventListener('wheel', wheel, { passive: false });
  el.addEventListener('dblclick', dblclick);
  el.addEventListener('pointerdown', down);
  el.addEventListener('pointermove', move);
  el.addEventListener('pointerup', up);
  el.addEventListener('pointercancel', up);
  return () => {
    el.removeEventListener('wheel', wheel);
    el.removeEventListener('dblclick', dblclick);
    el.removeEventListener('pointerdown', down);
    el.removeEventListener('pointermove', move);
    el.removeEventListener('pointerup', up);
    el.removeEventListener('pointercancel', up);
  };
}
