import { api } from '../api/index.ts';
import type { DavLock } from '../../src/contract/accounts.ts';
import { exactDate, formatExpiry } from '../app/format.ts';
import { useLoad } from '../app/load.ts';
import { toast, toastError } from '../app/toasts.ts';
import { LoadError, Section } from '../ui/page.tsx';

/** The account's WebDAV locks, for its owner: who holds each, until when, and a way to remove one a device left behind. */
export function DavLocks() {
  const list = useLoad(api.devices.locks);
  const remove = async (lock: DavLock) => {
    try {
      await api.devices.removeLock(lock.token);
      toast(`Lock on ${lock.path} removed`);
    } catch (err) {
      toastError(err);
    }
    await list.reload();
  };
  const locks = list.data?.locks ?? [];
  return (
    <Section
      title="WebDAV locks"
      intro="Apps lock a file while it is open so nobody else overwrites it, yours and your sub-users' alike. Remove a lock a device left behind; it would otherwise last until it expires."
    >
      {list.error && <LoadError message={list.error} retry={list.reload} />}
      {list.data && locks.length === 0 && <p class="muted">No locks.</p>}
      {locks.length > 0 && (
        <ul class="entries" aria-label="WebDAV locks">
          {locks.map((lock) => (
            <li key={lock.token} class="entry">
              <div class="entry-main">
                <span class="entry-title">
                  {lock.path === '/' ? 'All files' : lock.path}
                  {lock.depth === 'infinity' && lock.path !== '/' ? ' and everything in it' : ''}
                </span>
                <span class="muted small">
                  {lock.login.name || lock.login.email} · {lock.scope} ·{' '}
                  <span title={exactDate(lock.expiresAt)}>{formatExpiry(lock.expiresAt).toLowerCase()}</span>
                </span>
              </div>
              <button type="button" class="button small" aria-label={`Remove lock on ${lock.path}`} onClick={() => remove(lock)}>
                Remove lock
              </button>
            </li>
          ))}
        </ul>
      )}
    </Section>
  );
}
