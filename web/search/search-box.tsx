import { useEffect, useRef, useState } from 'preact/hooks';
import { navigate, route } from '../app/router.ts';
import { Icon } from '../ui/icons.tsx';

/** Results as you type (debounced): the results page is /search?q=, so it can be bookmarked and shared. */
export function SearchBox() {
  const onSearch = route.value.path === '/search';
  const [value, setValue] = useState(onSearch ? (route.value.query.get('q') ?? '') : '');
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const leftFrom = useRef<string | null>(null);
  useEffect(() => {
    if (!onSearch) setValue('');
  }, [onSearch]);
  const go = (q: string) => {
    if (!q.trim()) {
      if (onSearch) navigate(leftFrom.current ?? '/files', { replace: true });
      return;
    }
    const to = `/search?${new URLSearchParams({ q: q.trim() })}`;
    if (!onSearch) leftFrom.current = route.value.path + location.search;
    navigate(to, { replace: onSearch });
  };
  return (
    <form
      class="search"
      role="search"
      onSubmit={(e) => {
        e.preventDefault();
        if (timer.current) clearTimeout(timer.current);
        go(value);
      }}
    >
      <Icon name="search" size={18} />
      <input
        type="search"
        role="searchbox"
        aria-label="Search"
        placeholder="Search files and folders"
        aria-keyshortcuts="/"
        value={value}
        maxLength={200}
        onInput={(e) => {
          const q = e.currentTarget.value;
          setValue(q);
          if (timer.current) clearTimeout(timer.current);
          timer.current = setTimeout(() => go(q), 250);
        }}
        onKeyDown={(e) => {
          if (e.key === 'Escape') {
            setValue('');
            (e.currentTarget as HTMLInputElement).blur();
            go('');
          } else if (e.key === 'ArrowDown') {
            e.preventDefault();
            document.querySelector<HTMLElement>('.content [data-index="0"]')?.focus();
          }
        }}
      />
    </form>
  );
}
