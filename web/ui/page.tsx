import type { ComponentChildren } from 'preact';
import { useLayoutEffect, useRef } from 'preact/hooks';
import type { Pages } from '../app/load.ts';
import { ActionButton } from './form.tsx';
import { Icon, type IconName } from './icons.tsx';

export interface Tab {
  href: string;
  label: string;
  icon: IconName;
}

/** A screen with sections: a row of tab links (the URL names the section), then the section. */
export function TabbedPage({
  title,
  label,
  tabs,
  current,
  children,
}: {
  title: string;
  label: string;
  tabs: Tab[];
  current: string;
  children: ComponentChildren;
}) {
  const nav = useRef<HTMLElement>(null);
  // On a phone the row of tabs scrolls: keep the current one in view.
  useLayoutEffect(() => nav.current?.querySelector('[aria-current]')?.scrollIntoView({ block: 'nearest', inline: 'nearest' }), [current]);
  // …and show that it does: the side with more tabs beyond it fades out (data-more on the nav, for the CSS).
  useLayoutEffect(() => {
    const list = nav.current?.querySelector('ul');
    if (!list) return;
    const mark = () => {
      const left = list.scrollLeft > 1;
      const right = list.scrollLeft + list.clientWidth < list.scrollWidth - 1;
      nav.current!.dataset.more = left && right ? 'both' : left ? 'left' : right ? 'right' : '';
    };
    mark();
    list.addEventListener('scroll', mark, { passive: true });
    const ro = new ResizeObserver(mark);
    ro.observe(list);
    return () => {
      list.removeEventListener('scroll', mark);
      ro.disconnect();
    };
  }, []);
  return (
    <div class="tabbed">
      <h1>{title}</h1>
      <nav class="tabs" aria-label={label} ref={nav}>
        <ul>
          {tabs.map((t) => (
            <li key={t.href}>
              <a href={t.href} class={`tab ${t.href === current ? 'active' : ''}`} aria-current={t.href === current ? 'page' : undefined}>
                <Icon name={t.icon} size={18} />
                {t.label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <div class="tab-body">{children}</div>
    </div>
  );
}

/** What a login that may not use a screen sees: a plain sentence and a way on, never an error dump. */
export function NotAvailable({ title, children }: { title: string; children: ComponentChildren }) {
  return (
    <div class="empty page">
      <Icon name="lock" size={32} />
      <h1>{title}</h1>
      <p>{children}</p>
      <a class="button primary" href="/files">
        Go to My files
      </a>
    </div>
  );
}

/** A section of a settings screen: a heading, a sentence on what it is, its controls. */
export function Section({
  title,
  intro,
  children,
  id,
}: {
  title: string;
  intro?: ComponentChildren;
  children: ComponentChildren;
  id?: string;
}) {
  const hid = `${id ?? title.toLowerCase().replace(/[^a-z0-9]+/g, '-')}-title`;
  return (
    <section class="card" aria-labelledby={hid}>
      <h2 id={hid}>{title}</h2>
      {intro && <p class="muted intro">{intro}</p>}
      {children}
    </section>
  );
}

/** A failed load, said where the data would be, with a way to try again. */
export function LoadError({ message, retry }: { message: string; retry: () => void }) {
  return (
    <div class="banner error-banner" role="alert">
      <Icon name="alert" size={18} />
      <span>{message}</span>
      <button type="button" class="button small" onClick={retry}>
        Try again
      </button>
    </div>
  );
}

/** Reads the next page of a list read a page at a time, while the server has one. */
export function MoreButton({ pages, label }: { pages: Pages<unknown>; label: string }) {
  if (!pages.more) return null;
  return (
    <div class="form-actions">
      <ActionButton busy={pages.busy} onClick={pages.loadMore}>
        {label}
      </ActionButton>
    </div>
  );
}

/** A wide table that scrolls sideways on a phone; the keyboard can scroll it too. */
export function TableWrap({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    <div class="table-wrap" role="region" aria-label={label} tabIndex={0}>
      {children}
    </div>
  );
}
