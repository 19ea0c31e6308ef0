import { useEffect, useState } from 'preact/hooks';
import { parseSize } from '../../src/contract/size.ts';
import type { InvitationEntry, UserEntry, UserSort } from '../../src/contract/admin.ts';
import { api } from '../api/index.ts';
import { formatSize, sizeInput } from '../app/format.ts';
import { usePages } from '../app/load.ts';
import { loadStorage } from '../app/storage.ts';
import { toast, toastError } from '../app/toasts.ts';
import { Dialog, FormButtons, openDialog } from '../ui/dialog.tsx';
import { ActionButton, Field, FormError, Options } from '../ui/form.tsx';
import { LoadError, MoreButton, Section } from '../ui/page.tsx';
import { AccountEntry, Invitations } from './account-entry.tsx';
import { confirmAccountEmail, deleteAccount, setAccountDisabled } from './account-actions.tsx';
import { addUser } from './add-user.tsx';
import { useBusyKeys } from '../ui/busy-keys.ts';

const PAGE = 50;
const SORTS: ReadonlyArray<[UserSort, string]> = [
  ['created', 'Oldest first'],
  ['name', 'Name'],
  ['email', 'Email'],
  ['storage', 'Storage used'],
];
function LimitForm({ user, close }: { user: UserEntry; close: (changed?: boolean) => void }) {
  const [text, setText] = useState(user.storageLimit === null ? '' : sizeInput(user.storageLimit));
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const save = async (storageLimit: number | null) => {
    setBusy(true);
    setError(null);
    try {
      await api.admin.setStorageLimit({ targetUserId: user.id, storageLimit });
      close(true);
    } catch (err) {
      setError((err as Error).message);
      setBusy(false);
    }
  };
  return (
    <form
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        const bytes = parseSize(text);
        if (bytes === null || bytes <= 0) return setError(`“${text}” is not a size. Type one such as 50G, 500M or 1.5T.`);
        void save(bytes);
      }}
    >
      <div class="dialog-body form">
        <p>
          {user.email} uses {formatSize(user.storageUsed)}. Uploads and copies that would go over the limit are refused; nothing already
          stored is removed.
        </p>
        <Field label="Storage limit" hint="A size such as 50G, 500M or 1.5T (binary units: 1G = 1024 MiB).">
          <input required value={text} placeholder="50G" onInput={(e) => setText(e.currentTarget.value)} autofocus />
        </Field>
        <FormError message={error} />
        <p class="muted small">
          From a terminal:{' '}
          <code>
            coffer users set-limit {user.email} {text.trim() || '50G'}
          </code>
        </p>
      </div>
      <FormButtons submit="Save" busy={busy} cancel={() => close()}>
        {user.storageLimit !== null && (
          <ActionButton busy={busy} class="button push-left" onClick={() => void save(null)}>
            Reset to default
          </ActionButton>
        )}
      </FormButtons>
    </form>
  );
}

/** Every account, found and ordered as asked, each with its sub-users nested; adding people, storage limits. */
export function Users() {
  const [q, setQ] = useState('');
  // What is searched: the field's text after a pause in typing.
  const [query, setQuery] = useState('');
  const [sort, setSort] = useState<UserSort>('created');
  const [invitations, setInvitations] = useState<InvitationEntry[]>([]);
  const [adminId, setAdminId] = useState<string | null>(null);
  // The account just added, focused and marked where the list shows it.
  const [added, setAdded] = useState<string | null>(null);
  // Accounts and invitations whose Enable, Disable or Withdraw the server is answering: pressed again, they send nothing.
  const { busy, whileBusy } = useBusyKeys();

  // A new sort or search starts from the first page.
  const users = usePages(
    (cursor) =>
      api.admin
        .users({ limit: PAGE, cursor, sort, ...(query ? { q: query } : {}) })
        .then((r) => ({ items: r.users, nextCursor: r.nextCursor })),
    [query, sort],
  );
  useEffect(() => {
    const timer = setTimeout(() => setQuery(q.trim()), q ? 250 : 0);
    return () => clearTimeout(timer);
  }, [q]);
  // Another order or search lists afresh: the mark (and the focus it brings) stays with the list it was made in.
  useEffect(() => setAdded(null), [query, sort]);

  /** After a change to one account: its entry and its sub-users read again and put in place, the other pages left as shown. */
  const refresh = async (o: UserEntry) => {
    try {
      const r = await api.admin.users({ q: o.email, limit: 100 });
      const fresh = r.users.filter((u) => u.id === o.id || u.parentUserId === o.id);
      users.update((shown) => {
        const at = shown.findIndex((u) => u.id === o.id);
        if (at < 0) return shown;
        const rest = shown.filter((u) => u.id !== o.id && u.parentUserId !== o.id);
        rest.splice(at, 0, ...fresh);
        return rest;
      });
    } catch (err) {
      toastError(err);
    }
  };
  const loadInvitations = () =>
    api.admin
      .invitations()
      .then((r) => setInvitations(r.invitations))
      .catch(toastError);
  useEffect(() => {
    void loadInvitations();
    // The administrator is the first account created: the first owner in creation order.
    api.admin
      .users({ limit: 1 })
      .then((r) => setAdminId(r.users[0]?.id ?? null))
      .catch(() => {});
  }, []);

  const add = async () => {
    const added = await addUser();
    if (!added) return;
    toast(added.kind === 'invitation' ? `Invitation for ${added.email} created` : `${added.email} added`);
    if (added.kind === 'invitation') return loadInvitations();
    // Its place depends on the sort (last of all, oldest first): the list is read again as far as it was shown, and on to it.
    const email = added.email.toLowerCase();
    const isNew = (u: UserEntry) => u.parentUserId === null && u.email.toLowerCase() === email;
    const wanted = owners.length;
    const read = await users.reloadUntil((got) => got.some(isNew) && got.filter((u) => u.parentUserId === null).length >= wanted);
    setAdded(read?.find(isNew)?.id ?? null);
  };

  const withdraw = (i: InvitationEntry) =>
    whileBusy(i.id, async () => {
      try {
        await api.admin.withdrawInvitation(i.id);
        toast(`Invitation for ${i.email} withdrawn`);
      } catch (err) {
        toastError(err);
      }
      await loadInvitations();
    });

  const setLimit = async (u: UserEntry) => {
    const changed = await openDialog<boolean>((close) => (
      <Dialog title={`Storage limit of ${u.name || u.email}`} onClose={() => close()}>
        <LimitForm user={u} close={close} />
      </Dialog>
    ));
    if (!changed) return;
    toast(`Storage limit of ${u.email} saved`);
    void loadStorage();
    await refresh(u);
  };

  const setDisabled = (u: UserEntry, disabled: boolean) =>
    whileBusy(u.id, async () => {
      if (await setAccountDisabled(u, disabled)) await refresh(u);
    });
  const confirmEmail = (u: UserEntry) =>
    whileBusy(u.id, async () => {
      // A sub-user's entry is read again with its account's.
      if (await confirmAccountEmail(u)) await refresh(users.items?.find((o) => o.id === (u.parentUserId ?? u.id)) ?? u);
    });
  const remove = async (u: UserEntry) => {
    if (await deleteAccount(u)) await refresh(u);
  };

  const shown = users.items;
  const owners = (shown ?? []).filter((u) => u.parentUserId === null);
  return (
    <Section title="Users" intro="Every account on this Coffer, each followed by its sub-users, who share its storage and limit.">
      <div class="list-tools">
        <Field label="Search accounts" class="list-search">
          <input type="search" placeholder="Email or name" maxLength={200} value={q} onInput={(e) => setQ(e.currentTarget.value)} />
        </Field>
        <Field label="Sort by">
          <select value={sort} onChange={(e) => setSort(e.currentTarget.value as UserSort)}>
            <Options choices={SORTS} />
          </select>
        </Field>
        <button type="button" class="button primary" onClick={add}>
          Add user
        </button>
      </div>
      <Invitations invitations={invitations} withdraw={withdraw} busy={busy} />
      {users.error && <LoadError message={users.error} retry={() => void users.reload()} />}
      {shown && (
        <ul class="entries" aria-label="Accounts">
          {owners.length === 0 && <li class="entry muted">No account matches “{query}”.</li>}
          {owners.map((o) => (
            <AccountEntry
              key={o.id}
              o={o}
              subs={shown.filter((u) => u.parentUserId === o.id)}
              isAdmin={o.id === adminId}
              justAdded={o.id === added}
              busy={busy.has(o.id)}
              adminKnown={adminId !== null}
              setLimit={setLimit}
              setDisabled={setDisabled}
              remove={remove}
              confirmEmail={confirmEmail}
              confirming={busy}
            />
          ))}
        </ul>
      )}
      <MoreButton pages={users} label="Load more accounts" />
      {shown && (
        <p class="muted small">
          {owners.length} account{owners.length === 1 ? '' : 's'} shown{users.more ? '; more to load' : ''}. From a terminal:{' '}
          <code>coffer users list</code>, <code>coffer users invite &lt;email&gt;</code>,{' '}
          <code>coffer users set-limit &lt;email&gt; 50G</code>, <code>coffer users disable &lt;email&gt;</code>,{' '}
          <code>coffer users confirm-email &lt;email&gt;</code>, <code>coffer users delete &lt;email&gt;</code>.
        </p>
      )}
    </Section>
  );
}
