import { useRef, useState } from 'preact/hooks';

export interface Month {
  key: string;
  label: string;
  /** Its header's row. */
  row: number;
}

interface ScrubberProps {
  months: Month[];
  current: Month | undefined;
  jump: (month: Month) => void;
}

/**
 * Jump to a month: a list of months beside the grid on wider screens; on a phone a thin rail along the
 * right edge whose handle is dragged (its month said in a bubble beside the finger), a slider to keyboards.
 */
export function MonthScrubber(props: ScrubberProps) {
  if (props.months.length < 2) return null;
  return (
    <>
      <nav class="photo-scrubber" aria-label="Jump to month">
        <ul>
          {props.months.map((m) => (
            <li key={m.key}>
              <button
                type="button"
                class={m === props.current ? 'current' : ''}
                aria-current={m === props.current ? 'true' : undefined}
                onClick={() => props.jump(m)}
              >
                {m.label}
              </button>
            </li>
          ))}
        </ul>
      </nav>
      <MonthRail {...props} />
    </>
  );
}

function MonthRail({ months, current, jump }: ScrubberProps) {
  const rail = useRef<HTMLDivElement>(null);
  const [dragging, setDragging] = useState<number | null>(null);
  const last = months.length - 1;
  const at = dragging ?? Math.max(0, current ? months.indexOf(current) : 0);
  const go = (index: number) => {
    const i = Math.max(0, Math.min(last, index));
    jump(months[i]!);
    return i;
  };
  const fromPointer = (clientY: number) => {
    const r = rail.current!.getBoundingClientRect();
    return Math.round(Math.max(0, Math.min(1, (clientY - r.top) / r.height)) * last);
  };
  // The handle's middle runs from half its height below the rail's top to half above its bottom.
  const top = `calc(${at / last} * (100% - 28px) + 14px)`;
  return (
    <div
      ref={rail}
      class={`photo-rail ${dragging !== null ? 'dragging' : ''}`}
      role="slider"
      tabIndex={0}
      aria-label="Jump to month"
      aria-orientation="vertical"
      aria-valuemin={1}
      aria-valuemax={months.length}
      aria-valuenow={at + 1}
      aria-valuetext={months[at]?.label}
      onPointerDown={(e) => {
        e.currentTarget.setPointerCapture(e.pointerId);
        setDragging(go(fromPointer(e.clientY)));
      }}
      onPointerMove={(e) => {
        if (dragging === null) return;
        const i = fromPointer(e.clientY);
        if (i !== dragging) setDragging(go(i));
      }}
      onPointerUp={() => setDragging(null)}
      onPointerCancel={() => setDragging(null)}
      onKeyDown={(e) => {
        const step = { ArrowDown: 1, ArrowRight: 1, PageDown: 3, ArrowUp: -1, ArrowLeft: -1, PageUp: -3 }[e.key];
        if (step !== undefined) go(at + step);
        else if (e.key === 'Home') go(0);
        else if (e.key === 'End') go(last);
        else return;
        e.preventDefault();
      }}
    >
      <span class="photo-rail-handle" style={{ top }} aria-hidden="true" />
      {dragging !== null && (
        <span class="photo-rail-bubble" style={{ top }} aria-hidden="true">
          {months[at]!.label}
        </span>
      )}
    </div>
  );
}
