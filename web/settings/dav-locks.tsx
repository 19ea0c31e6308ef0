import { api } from '../api/index.ts';
import type { DavLock } from '../../src/contract/accounts.ts';
import { exactDate, formatExpiry } from '../app/format.ts';
import { useLoad } from '../app/load.ts';
import { Section } from '../ui/page.tsx';
import { CredentialList, removeEntry } from './credential-list.tsx';

/** The account's WebDAV locks, for its owner: who holds each, until when, and a way to remove one a device left behind. */
export function DavLocks() {
  const list = useLoad(api.devices.locks);
  const remove = (lock: DavLock) =>
    removeEntry({ call: () => api.devices.removeLock(lock.token), done: `Lock on ${lock.path} removed`, reload: list.reload });
  const locks = list.data?.locks ?? [];
  return (
    <Section
      title="WebDAV locks"
      intro="Apps lock a file while it is open so nobody else overwrites it, yours and your sub-users' alike. Remove a lock a device left behind; it would otherwise last until it expires."
    >
      <CredentialList
        label="WebDAV locks"
        list={list}
        entries={locks}
        keyOf={(lock) => lock.token}
        empty="No locks."
        title={(lock) => (
          <>
            {lock.path === '/' ? 'All files' : lock.path}
            {lock.depth === 'infinity' && lock.path !== '/' ? ' and everything in it' : ''}
          </>
        )}
        facts={(lock) => (
          <>
            {lock.login.name || lock.login.email} · {lock.scope} ·{' '}
            <span title={exactDate(lock.expiresAt)}>{formatExpiry(lock.expiresAt).toLowerCase()}</span>
          </>
        )}
        action={(lock) => ({ label: 'Remove lock', name: `Remove lock on ${lock.path}`, run: () => void remove(lock) })}
      />
    </Section>
  );
}
